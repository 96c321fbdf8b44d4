#!/usr/bin/env bash
# bench.sh — loadgen against its peers on the same target, in one run.
#
# nginx (Debian package, 1 worker) on TGT_CPU serves a 100-byte body on
# loopback; wrk and loadgen run pinned to GEN_CPU with the same flags, REPS
# times each, alternating. For each run: requests/s, p50/p99 as the tool
# reports them, the tool's CPU seconds (user+sys from /usr/bin/time), and
# requests per generator CPU-second; then the ratio loadgen / wrk.
#
# Traffic goes to 127.0.0.1 only; every run is bounded by -d and timeout(1).
#
# Which CPU is a generator's: user+sys from rusage (cpu_s) is what the
# kernel's scheduler charged the process; taken_s is what it took from the
# others on GEN_CPU, by a spinner at the lowest priority (bench/soak) that
# runs there the whole bench: the loops it did not make during the run,
# against its rate just before and after. taken_s counts what cpu_s does
# not: interrupts and the switches to and from the generator. The README
# (Benchmarks: which CPU is the generator's) has why the ways differ.
#
# A run that failed is no figure: one whose tool exited non-zero (or was
# killed at its time limit), counted no requests, or had more than
# MAX_ERRORS (0.1%) of its requests fail by the tool's own count (wrk's
# and loadgen's socket errors and non-2xx/3xx answers, loadgen's gRPC
# statuses but OK and protocol errors among them; h2load's failed
# requests; fortio's answers but 200 or SERVING; vegeta's but 200; ghz's
# calls but OK) is left out of table.txt and the medians, and listed with
# its reason at the end of summary.txt (failed.txt). Its output stays.
#
# Knobs: DUR=10 REPS=3 GEN_CPU=0 TGT_CPU=1 ONLY=<regex over case names>
#        BENCH_WORK=/tmp/loadgen-bench SKIP_INSTALL=1
#        SOAK=0 (no spinner, no taken_s) SOAK_GAP=1.5 (its baseline, s)
#        MAX_ERRORS=0.001 (the share of failed requests that leaves a run out)
#        TGT_PATH=/100b (the path nginx serves the cases; /500 answers 500,
#        /flaky 500 to 1% of requests: to check that failed runs are left out)
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
W=${BENCH_WORK:-/tmp/loadgen-bench}
DUR=${DUR:-10}
REPS=${REPS:-3}
GEN_CPU=${GEN_CPU:-0}
TGT_CPU=${TGT_CPU:-1}
ONLY=${ONLY:-}
SOAK=${SOAK:-1}
SOAK_GAP=${SOAK_GAP:-1.5}
MAX_ERRORS=${MAX_ERRORS:-0.001}
TGT_PATH=${TGT_PATH:-/100b}
H=127.0.0.1
P_H1=18180 P_H2C=18182 P_TLS=18443 P_GRPC=18190 P_SP=18300 P_TCP=18301 P_IPERF=18302
LG=$W/loadgen
OUT=$W/results-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT" "$W/nginx/logs" "$W/nginx/tmp"
export PATH=/usr/local/go/bin:$PATH

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
# listening PORT PID...: every one of these processes (the bench started
# them) listens on PORT, not just anything (a target left from another run
# would answer in their place).
listening() {
  local port=$1 out; shift
  out=$(ss -Hltnp "( sport = :$port )")
  for pid; do [[ $out == *"pid=$pid,"* ]] || return 1; done
}
# wait_listen PORT PID NAME: waits (up to 10 s, while PID lives) until the
# process the bench started listens on PORT; says why not and fails.
wait_listen() {
  local port=$1 pid=$2 name=$3
  for _ in $(seq 100); do
    listening "$port" "$pid" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  log "$name (pid $pid) is not listening on :$port: $(ss -Hltnp "( sport = :$port )" | grep -o 'users:.*' || echo 'nothing is')"
  return 1
}

# ------------------------------------------------------------ install, build
if [[ -z ${SKIP_INSTALL:-} ]]; then
  need=()
  command -v wrk >/dev/null || need+=(wrk)
  command -v nginx >/dev/null || need+=(nginx)
  [[ -x /usr/bin/time ]] || need+=(time)
  command -v taskset >/dev/null || need+=(util-linux)
  command -v ss >/dev/null || need+=(iproute2)
  command -v h2load >/dev/null || need+=(nghttp2-client)
  command -v openssl >/dev/null || need+=(openssl)
  command -v jq >/dev/null || need+=(jq)
  command -v sockperf >/dev/null || need+=(sockperf)
  command -v iperf3 >/dev/null || need+=(iperf3)
  if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    apt-get update -q >"$OUT/install.log" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >>"$OUT/install.log" 2>&1 ||
      { log "install failed, see $OUT/install.log"; exit 1; }
  fi
fi
mkdir -p "$W/bin"
if [[ -z ${SKIP_INSTALL:-} && ! -x $W/bin/ghz ]]; then
  log "go install ghz"
  GOBIN=$W/bin go install github.com/bojand/ghz/cmd/ghz@latest >>"$OUT/install.log" 2>&1 || log "ghz install failed: gRPC case runs without it"
fi
# fortio 1.68.2: newer fortio needs a module the proxy here refuses.
if [[ -z ${SKIP_INSTALL:-} && ! -x $W/bin/fortio ]]; then
  log "go install fortio"
  GOBIN=$W/bin go install fortio.org/fortio@v1.68.2 >>"$OUT/install.log" 2>&1 || log "fortio install failed: its cases are skipped"
fi
if [[ -z ${SKIP_INSTALL:-} && ! -x $W/bin/vegeta ]]; then
  log "go install vegeta"
  GOBIN=$W/bin go install github.com/tsenart/vegeta/v12@v12.13.0 >>"$OUT/install.log" 2>&1 || log "vegeta install failed: its cases are skipped"
fi
log "building loadgen"
(cd "$ROOT" && go build -o "$LG" ./cmd/loadgen && go build -o "$W/soak" ./bench/soak) || exit 1

# ------------------------------------------------------------ target
NGINX_PID= SOAK_PID=
cleanup() {
  [[ -n $NGINX_PID ]] && kill "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
  # CONT after TERM: cpu-20k stops the spinner for its idle runs, and a
  # stopped process takes no TERM until it runs again
  [[ -n $SOAK_PID ]] && kill "$SOAK_PID" 2>/dev/null && kill -CONT "$SOAK_PID" 2>/dev/null && wait "$SOAK_PID" 2>/dev/null
  NGINX_PID= SOAK_PID=
}
trap cleanup EXIT
trap 'exit 130' INT TERM

b100=$(printf 'x%.0s' $(seq 99))   # + "\n" = 100 bytes
# RSA-2048, as NGINX's published "SSL TPS" figures; no session cache or
# tickets, so every new connection is a full handshake.
[[ -s $W/nginx/cert.pem ]] || openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/nginx/key.pem" \
  -out "$W/nginx/cert.pem" -days 30 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1
cat >"$W/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
master_process on;
pid $W/nginx/nginx.pid;
error_log $W/nginx/logs/error.log warn;
worker_rlimit_nofile 20000;
events { worker_connections 16384; }
http {
  access_log off;
  split_clients "\$request_id" \$flaky { 1% fail; * ok; }
  default_type text/plain;
  keepalive_requests 10000000;
  keepalive_timeout 75s;
  client_body_temp_path $W/nginx/tmp; proxy_temp_path $W/nginx/tmp; fastcgi_temp_path $W/nginx/tmp;
  uwsgi_temp_path $W/nginx/tmp; scgi_temp_path $W/nginx/tmp;
  server {
    listen $H:$P_H1 backlog=4096;
    listen $H:$P_H2C http2 backlog=4096;
    listen $H:$P_TLS ssl http2 backlog=4096;
    ssl_certificate $W/nginx/cert.pem;
    ssl_certificate_key $W/nginx/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache off;
    ssl_session_tickets off;
    location = /100b { return 200 "$b100\n"; }
    location = /500 { return 500 "$b100\n"; }
    location = /flaky { if (\$flaky = fail) { return 500 "$b100\n"; } return 200 "$b100\n"; }
  }
}
CONF
taskset -c "$TGT_CPU" nginx -c "$W/nginx/nginx.conf" -p "$W/nginx" >"$OUT/nginx.out" 2>&1 &
NGINX_PID=$!
wait_listen "$P_H1" "$NGINX_PID" nginx || { log "nginx did not start: $(cat "$OUT/nginx.out")"; exit 1; }
log "nginx $NGINX_PID on CPU $TGT_CPU, generators on CPU $GEN_CPU, ${DUR}s x $REPS"
if ((SOAK)); then
  GOMAXPROCS=1 chrt --idle 0 taskset -c "$GEN_CPU" "$W/soak" spin >"$OUT/soak.txt" 2>&1 &
  SOAK_PID=$!
  log "spinner $SOAK_PID on CPU $GEN_CPU at SCHED_IDLE: taken_s"
  sleep 0.5 # its samples must cover the first run's baseline
fi

# ------------------------------------------------------------ runs
# parse: rps p50_ms p99_ms requests — wrk's layout (which loadgen prints
# too), h2load's "finished in" / "requests:" lines, or ghz's JSON.
parse() {
  if [[ $1 == *.fortio.* ]]; then
    jq -r '(.DurationHistogram.Percentiles // []) as $p | "\(.ActualQPS|floor) \(($p[]|select(.Percentile==50)|.Value*1000) // 0) \(($p[]|select(.Percentile==99)|.Value*1000) // 0) \(.DurationHistogram.Count)"' "${1%.out}.json" 2>/dev/null || echo "0 0 0 0"
    return
  fi
  if [[ $1 == *.vegeta.* ]]; then # the attack's results, reported after the run (not in its CPU)
    "$W/bin/vegeta" report -type json "${1%.out}.bin" >"${1%.out}.json" 2>/dev/null
    jq -r '"\(.rate|floor) \(.latencies."50th"/1e6) \(.latencies."99th"/1e6) \(.status_codes."200" // 0)"' "${1%.out}.json" 2>/dev/null || echo "0 0 0 0"
    return
  fi
  if [[ $1 =~ \.ghz-([0-9]+)\.r[0-9]+\.out$ ]]; then # ghz streaming, N messages per call: see case_grpc_stream
    jq -r --argjson n "${BASH_REMATCH[1]}" '(.latencyDistribution // []) as $l | (.statusCodeDistribution.OK // 0) as $ok |
      "\(if .total > 0 then ($ok*$n/(.total/1e9))|floor else 0 end) \(if $n == 1 then (($l[]|select(.percentage==50)|.latency/1e6) // 0) else 0 end) \(if $n == 1 then (($l[]|select(.percentage==99)|.latency/1e6) // 0) else 0 end) \($ok*$n)"' \
      "${1%.out}.json" 2>/dev/null || echo "0 0 0 0"
    return
  fi
  if [[ $1 == *.ghz.* ]]; then
    jq -r '(.latencyDistribution // []) as $l | "\(.rps|floor) \(($l[]|select(.percentage==50)|.latency/1e6) // 0) \(($l[]|select(.percentage==99)|.latency/1e6) // 0) \(.statusCodeDistribution.OK // 0)"' "${1%.out}.json" 2>/dev/null || echo "0 0 0 0"
    return
  fi
  if [[ $1 == *.sockperf.* ]]; then # one-way latency in usec: a round trip is twice it
    awk '/\[Valid Duration\]/ { for (i=1;i<=NF;i++) { if ($i ~ /^RunTime=/) { split($i,a,"="); t=a[2]+0 } if ($i ~ /^ReceivedMessages=/) { split($i,b,"="); n=b[2]+0 } } }
      /percentile 50.000/ {p50=$NF*2/1000} /percentile 99.000/ {p99=$NF*2/1000}
      END { printf "%.0f %.3f %.3f %d\n", (t>0 ? n/t : 0), p50, p99, n }' "$1"
    return
  fi
  if [[ $1 == *.iperf3.* ]]; then # Gbit/s in the rps column, Mbit sent as the count
    jq -r '"\(.end.sum_sent.bits_per_second/1e9) 0 0 \(.end.sum_sent.bytes*8/1e6|floor)"' "$1" 2>/dev/null || echo "0 0 0 0"
    return
  fi
  if [[ $1 == *tcpstream*.loadgen.* ]]; then
    awk '/Throughput:/ {g=$2} /requests in/ {d=$4+0} END { printf "%.3f 0 0 %d\n", g, g*1000*d }' "$1"
    return
  fi
  awk 'function ms(v){ if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
    /^ +50%/ {p50=ms($2)} /^ +99%/ {p99=ms($2)} /requests in/ {n=$1} /^Requests\/sec:/ {rps=$2}
    /^finished in/ {rps=$4} /^requests:/ {n=$8}
    END{printf "%.0f %.3f %.3f %d\n", rps, p50, p99, n}' "$1"
}

# errors: failed total — the requests of a run that failed, by the tool's
# own count, and those it tried (parse has run: vegeta's report is there).
errors() {
  case $1 in
  *.fortio.*) # RetCodes by answer: 200 (HTTP) or SERVING (gRPC health) is a success
    jq -r '(.RetCodes // {}) as $c | (.DurationHistogram.Count // 0) as $n | "\($n - ($c["200"] // 0) - ($c["SERVING"] // 0)) \($n)"' "${1%.out}.json" 2>/dev/null || echo "0 0" ;;
  *.vegeta.*) jq -r '"\(.requests - (.status_codes."200" // 0)) \(.requests)"' "${1%.out}.json" 2>/dev/null || echo "0 0" ;;
  *.ghz*) jq -r '"\(.count - (.statusCodeDistribution.OK // 0)) \(.count)"' "${1%.out}.json" 2>/dev/null || echo "0 0" ;;
  *.sockperf.* | *.iperf3.*) echo "0 0" ;; # no count of their own: their exit status says
  *) # wrk's layout (loadgen prints it too, its gRPC statuses but OK among
    # the non-2xx), h2load's "requests:" line
    awk '/requests in/ {n=$1} /^requests:/ {n=$6; e=$10}
      /Socket errors:/ { gsub(",", ""); s=$4+$6+$8+$10; e+=s }
      /Non-2xx or 3xx responses:/ || /Protocol errors:/ {e+=$NF}
      END { printf "%d %d\n", e, n+s }' "$1" ;;
  esac
}

printf '%-14s %-8s %3s %10s %9s %9s %7s %10s %7s %10s %10s\n' case tool rep rps p50_ms p99_ms cpu_s req/cpu_s taken_s req/taken sleeps/req >"$OUT/table.txt"
# settle waits (up to 75 s) until nginx holds fewer than 100 connections
# and fewer than 8,000 closed ones wait out TIME-WAIT on loopback: a peer
# that collapsed (vegeta opens connections without bound once it falls
# behind) leaves thousands closing, which took the next run's
# worker_connections, and tens of thousands of ports in TIME-WAIT (60 s),
# which left the c10000 runs after it without ports to connect from
# (the first pair of h1-c10k failed thousands of connects).
settle() {
  local i n=0 tw=0
  for ((i = 0; i < 750; i++)); do
    n=$(ss -Htn state established state syn-recv state close-wait state last-ack \
      "( sport = :$P_H1 or sport = :$P_H2C or sport = :$P_TLS )" | wc -l)
    tw=$(ss -Htn state time-wait "( dst 127.0.0.0/8 )" | wc -l)
    ((n < 100 && tw < 8000)) && return 0
    sleep 0.1
  done
  log "nginx still holds $n connections, $tw in TIME-WAIT, after 75 s"
}

one() { # case tool rep cmd...  (@B@ in cmd = this run's file base)
  local c=$1 t=$2 r=$3; shift 3
  local b=$OUT/$c.$t.r$r
  set -- "${@//@B@/$b}"
  local t0 t1 taken=- pert=- drift sw rc=0 why= ne nt
  settle
  ((SOAK)) && sleep "$SOAK_GAP"
  t0=$(date +%s%N)
  timeout -k 5 -s INT $((DUR + 20)) /usr/bin/time -f '%U %S %M %w' -o "$b.time" taskset -c "$GEN_CPU" "$@" >"$b.out" 2>"$b.err" || rc=$?
  t1=$(date +%s%N)
  if ((SOAK)); then
    sleep "$SOAK_GAP"; sleep 0.2 # its samples past the baseline
    # CPU-s taken, the spinner's rate, its drift from before to after
    read -r taken _ drift < <("$W/soak" taken -around "${SOAK_GAP}s" "$OUT/soak.txt" "$t0" "$t1" 2>>"$b.err") || taken=-
    echo "$c $t $r ${taken:--} ${drift:--}" >>"$OUT/soak-drift.txt"
  fi
  read -r rps p50 p99 n < <(parse "$b.out")
  read -r u s m sw < <(tail -1 "$b.time") # sw: voluntary context switches, each a sleep
  # a run that failed is no figure: not in the table nor the medians
  read -r ne nt < <(errors "$b.out")
  if ((rc == 124 || rc == 137)); then
    why="still running at its time limit ($((DUR + 20)) s): killed"
  elif ((rc != 0)); then
    why="exit status $rc"
    ((${ne:-0} > 0)) && why+=", $ne of $nt requests failed"
  elif awk -v e="${ne:-0}" -v t="${nt:-0}" -v m="$MAX_ERRORS" 'BEGIN { exit !(t > 0 && e / t > m) }'; then
    why=$(awk -v e="$ne" -v t="$nt" -v m="$MAX_ERRORS" 'BEGIN { printf "%d of %d requests failed (%.2f%%, over %g%%)", e, t, 100 * e / t, 100 * m }')
  elif [[ -z $n || $n == 0 ]]; then
    why="counted no requests"
  fi
  if [[ -n $why ]]; then
    log "$c $t run $r: $why (its output: $b.out, $b.err): left out of the medians"
    echo "$c $t $r: $why" >>"$OUT/failed.txt"
    return 1
  fi
  echo "$c $t $r ${m:-0}" >>"$OUT/rss.txt" # peak RSS, KiB
  local cpu
  cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}')
  local per
  per=$(awk -v n="$n" -v c="$cpu" 'BEGIN{ if (c>0) printf "%.0f", n/c; else print 0 }')
  [[ $taken != - ]] && pert=$(awk -v n="$n" -v c="$taken" 'BEGIN{ if (c>0) printf "%.0f", n/c; else print 0 }')
  local spr
  spr=$(awk -v sw="${sw:-0}" -v n="$n" 'BEGIN{ if (n>0) printf "%.3f", sw/n; else print "-" }')
  printf '%-14s %-8s %3s %10s %9s %9s %7s %10s %7s %10s %10s\n' "$c" "$t" "$r" "$rps" "$p50" "$p99" "$cpu" "$per" "$taken" "$pert" "$spr" | tee -a "$OUT/table.txt" >&2
}

# A target's CPU seconds so far (user+sys, in clock ticks).
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# target_row CASE TARGET REP T0 T1: the target's requests per CPU-second
# over the run CASE.loadgen.rREP (ticks T0 to T1).
target_row() {
  local n
  n=$(awk '/requests in/ {print $1}' "$OUT/$1.loadgen.r$3.out")
  awk -v n="$n" -v t=$(($5 - $4)) -v hz="$(getconf CLK_TCK)" -v c="$1" -v tg="$2" -v r="$3" \
    'BEGIN{ printf "%-14s %-8s %3s %10s %9s %9s %7.2f %10.0f\n", c, tg, r, "-", "-", "-", t/hz, (t>0 ? n/(t/hz) : 0) }' |
    tee -a "$OUT/table.txt" >&2
}

case_h1() { # name conns
  local name=$1 c=$2 url=http://$H:$P_H1$TGT_PATH
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  # nginx's own cost per request, over loadgen's runs at c50: what a C
  # server pays on this kernel, the bar for loadgen's httpbin below.
  local worker t0 t1
  worker=$(pgrep -P "$NGINX_PID" | head -1)
  for ((r = 1; r <= REPS; r++)); do
    one "$name" wrk "$r" wrk -t1 -c"$c" -d"${DUR}s" --latency "$url"
    t0=$(ticks "$worker")
    one "$name" loadgen "$r" "$LG" run -t1 -c"$c" -d"${DUR}s" --latency -q "$url" || continue # no run, no target row
    t1=$(ticks "$worker")
    ((c > 1)) && target_row "$name" nginx "$r" "$t0" "$t1"
  done
}

case_h1 h1-c50 50
case_h1 h1-c1 1

# Open loop at a fixed rate, c50 against the same nginx: loadgen -R beside
# fortio (-qps -uniform -nocatchup, as istio/tools drives it) and vegeta
# (attack -rate), alternating, at each of OPEN_RATES. Besides the common
# columns, open.txt keeps what was asked and achieved and the late sends
# (loadgen's >1 ms; the peers count none). p99 is each tool's own: loadgen's
# from each request's intended start (corrected for coordinated omission),
# fortio's and vegeta's from its actual start; p99_send_ms is loadgen's
# from its actual start too, like for like. sleeps/req: the voluntary
# context switches per request (each a wake-up), which the summary prices
# at what a wake-up costs on GEN_CPU (soak wake).
OPEN_RATES=${OPEN_RATES:-1000 20000 50000}
printf '%-14s %-8s %3s %8s %10s %7s %9s %7s %11s %7s %11s %10s %11s\n' case tool rep asked achieved late p99_ms cpu_s ms_cpu/1k taken_s ms_taken/1k sleeps/req p99_send_ms >"$OUT/open.txt"
one_open() { # case tool rep rate cmd...
  local c=$1 t=$2 r=$3 rate=$4; shift 4
  one "$c" "$t" "$r" "$@" || return 0
  local b=$OUT/$c.$t.r$r ach late=- rps p50 p99 n cpu per taken pert sw p99s
  read -r _ _ _ rps p50 p99 cpu per taken pert _ < <(tail -1 "$OUT/table.txt")
  read -r _ _ _ sw < <(tail -1 "$b.time") # voluntary context switches: the sleeps
  case $t in
    loadgen) read -r ach late p99s < <(jq -r '"\(.summary.pacing.achieved_rps) \(.summary.pacing.late) \(.summary.uncorrected.p99_us / 1000)"' "$b.json" 2>/dev/null) ;;
    fortio) ach=$(jq -r '.ActualQPS' "$b.json" 2>/dev/null) ;;
    *) ach=$rps ;;
  esac
  awk -v c="$c" -v t="$t" -v r="$r" -v rate="$rate" -v a="${ach:-0}" -v late="${late:--}" -v p99="$p99" -v cpu="$cpu" -v per="$per" -v tk="${taken:--}" -v pt="${pert:-0}" -v sw="${sw:-0}" -v p99s="${p99s:-$p99}" \
    'BEGIN{ n=per*cpu; printf "%-14s %-8s %3s %8d %10.1f %7s %9s %7s %11.2f %7s %11s %10.3f %11s\n", c, t, r, rate, a, late, p99, cpu, (per>0 ? 1e6/per : 0), tk, (pt>0 ? sprintf("%.2f", 1e6/pt) : "-"), (n>0 ? sw/n : 0), p99s }' >>"$OUT/open.txt"
}
case_open() {
  local rate name url=http://$H:$P_H1$TGT_PATH
  for rate in $OPEN_RATES; do
    name=open$((rate / 1000))k-c50
    [[ -n $ONLY && ! $name =~ $ONLY ]] && continue
    # What a wake-up costs on GEN_CPU, as the runs find it (the spinner
    # there or not): by a timer, as an open loop sleeps to its next send,
    # and by another thread on the CPU. The summary splits each tool's CPU
    # per request into its sleeps at the timer's cost and the rest.
    [[ -s $OUT/wake.txt ]] || { taskset -c "$GEN_CPU" "$W/soak" wake >"$OUT/wake.txt" 2>>"$OUT/wake.err" &&
      log "a wake-up on CPU $GEN_CPU costs the woken thread $(awk '{print $1 " us by a timer, " $2 " us by another thread"}' "$OUT/wake.txt")"; }
    for ((r = 1; r <= REPS; r++)); do
      [[ -x $W/bin/fortio ]] && one_open "$name" fortio "$r" "$rate" "$W/bin/fortio" load -loglevel Warning \
        -qps "$rate" -c 50 -uniform -nocatchup -t "${DUR}s" -r 0.00001 -p 50,99 -json @B@.json "$url"
      [[ -x $W/bin/vegeta ]] && one_open "$name" vegeta "$r" "$rate" sh -c \
        "echo 'GET $url' | exec $W/bin/vegeta attack -rate $rate -connections 50 -duration ${DUR}s -output @B@.bin"
      one_open "$name" loadgen "$r" "$rate" "$LG" run -t1 -c50 -R "$rate" -d "${DUR}s" --latency -q --json @B@.json "$url"
    done
  done
}
case_open

# Ten thousand connections, closed loop (issue 28, point 2): wrk and
# loadgen at c10000 against the same nginx; besides requests per
# CPU-second, each one's peak RSS (rss.txt) and loadgen's slowest connect
# (all are opened before the clock starts).
case_c10k() {
  local name=h1-c10k url=http://$H:$P_H1$TGT_PATH
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  for ((r = 1; r <= REPS; r++)); do
    one "$name" wrk "$r" wrk -t1 -c10000 -d"${DUR}s" --latency "$url"
    one "$name" loadgen "$r" "$LG" run -t1 -c10000 -d"${DUR}s" --latency -q --json @B@.json "$url"
  done
}
case_c10k

# cmp NAME PEER 'peer cmd' 'loadgen cmd': REPS alternating runs of each.
cmp() {
  local name=$1 peer=$2 pc=$3 lc=$4
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  for ((r = 1; r <= REPS; r++)); do
    eval "one $name $peer $r $pc"
    eval "one $name loadgen $r $lc"
  done
}
U=$H:$P_H2C$TGT_PATH T=$H:$P_TLS$TGT_PATH
cmp h2c-c50m10 h2load "h2load -D $DUR -c 50 -m 10 -t 1 http://$U" "$LG run -p h2c -t1 -c50 -m10 -d${DUR}s --latency -q http://$U"
# Many streams on few connections (issue 28, point 3).
cmp h2c-c10m100 h2load "h2load -D $DUR -c 10 -m 100 -t 1 http://$U" "$LG run -p h2c -t1 -c10 -m100 -d${DUR}s --latency -q http://$U"
cmp h2tls-c50m1 h2load "h2load -D $DUR -c 50 -m 1 -t 1 https://$T" "$LG run -p h2 -k -t1 -c50 -d${DUR}s --latency -q https://$T"
# HTTP/1.1 over TLS, kept alive (nginx offers h2 too: both ask http/1.1).
cmp h1tls-c50 wrk "wrk -t1 -c50 -d${DUR}s --latency https://$T" "$LG run -k -t1 -c50 -d${DUR}s --latency -q https://$T"
# TLS handshakes/s: a new connection (full RSA-2048 handshake) per request.
cmp tlshs-c50 wrk "wrk -t1 -c50 -d${DUR}s --latency -H 'Connection: close' https://$T" \
  "$LG run -k --new-conn -t1 -c50 -d${DUR}s --latency -q https://$T"
if [[ -x $W/bin/fortio ]]; then
  cmp tlshs-c50 fortio "$W/bin/fortio load -loglevel Warning -qps 0 -c 50 -t ${DUR}s -k -keepalive=false -r 0.00001 -p 50,99 -json @B@.json https://$T" \
    "$LG run -k --new-conn -t1 -c50 -d${DUR}s --latency -q https://$T"
fi

# gRPC unary against loadgen's grpc-go target (health check, as ghz and
# fortio were measured), target on TGT_CPU.
case_grpc() {
  local name=grpc-c50
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  # up to three tools a rep, each run with its settle and exit (a target
  # that stopped early once left a rep's last runs with nothing to call)
  taskset -c "$TGT_CPU" "$LG" serve grpc --addr "$H:$P_GRPC" --for $((REPS * 3 * (DUR + 30) + 60))s >"$OUT/grpc.out" 2>&1 &
  local pid=$!
  wait_listen "$P_GRPC" "$pid" "loadgen serve grpc" || { kill "$pid" 2>/dev/null; return 0; }
  for ((r = 1; r <= REPS; r++)); do
    if [[ -x $W/bin/ghz ]]; then
      one "$name" ghz "$r" "$W/bin/ghz" --insecure --call grpc.health.v1.Health/Check -d '{"service":""}' \
        -z "${DUR}s" -c 50 --connections 50 --format json -o "@B@.json" "$H:$P_GRPC"
    fi
    one "$name" loadgen "$r" "$LG" run -p grpc --health -t1 -c50 -d"${DUR}s" --latency -q "$H:$P_GRPC"
    if [[ -x $W/bin/fortio ]]; then
      one "$name" fortio "$r" "$W/bin/fortio" load -grpc -loglevel Warning -qps 0 -c 50 -t "${DUR}s" \
        -r 0.00001 -p 50,99 -json "@B@.json" "$H:$P_GRPC"
    fi
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
case_grpc

# gRPC ping-pong streams (issue 28, point 4): loadgen's grpc-stream keeps
# one Echo/PingPong stream per connection for the whole run and sends a
# message when it has the reply to the last one (one in flight per
# stream), on one stream (c1) and on 50 streams over 50 connections (c50),
# against loadgen's own grpc-go target on TGT_CPU. Messages of a 100-byte
# body: 107 bytes each way on the wire (gRPC's 5-byte prefix, a Payload of
# 102), the same from every tool; req/cpu_s is round trips (a message each
# way) per generator CPU-second.
#
# The peer is ghz, calling the same method by the target's reflection. ghz
# has no ping-pong: a bidi call opens a stream whose sender goroutine sends
# --stream-call-count messages without waiting for replies (as many in
# flight as grpc-go's 64 KiB write quota per stream lets it), while another
# goroutine reads the replies; and ghz counts calls, not messages. So two
# ways of running it, each with --duration-stop wait (the calls in flight
# at the end finish, so each call counted OK carried N messages each way)
# and counted as N x OK calls:
#   ghz-1     --stream-call-count 1: one message in flight, as in ping-pong,
#             but a new stream (HEADERS, trailers) for every message; its
#             latency (per call) is a message's round trip;
#   ghz-1000  --stream-call-count 1000: ghz's streaming as its users run
#             it, 1000 messages a stream, pipelined: a throughput load,
#             not ping-pong (many messages per write and per read), so
#             loadgen's ratio to it says how far ping-pong stands from a
#             pipelined stream, not like for like; its latency is a whole
#             call's and is left out (0).
# fortio is not in this row: `-grpc -ping` calls fortio's own
# fgrpc.PingServer/Ping, which loadgen's target does not serve (every call
# fails Unimplemented), and it is a unary call, as its health checks are;
# its -s runs that many unary calls at once on each connection (HTTP/2
# streams, not a gRPC stream). Its unary figures are grpc-c50's.
#
# Every run gets a target of its own, whose count of messages answered
# goes in stream.txt beside the tool's messages sent and received
# (loadgen's from its byte counts; ghz's N x calls and N x OK calls).
STREAM_SIZE=100 STREAM_WIRE=107
printf '%-15s %-8s %3s %10s %10s %10s\n' case tool rep sent received target >"$OUT/stream.txt"
one_stream() { # case tool rep cmd...
  local c=$1 t=$2 r=$3; shift 3
  local b=$OUT/$c.$t.r$r pid sent=0 recv=0 srv
  taskset -c "$TGT_CPU" "$LG" serve grpc --addr "$H:$P_GRPC" --for $((DUR + 60))s >"$b.srv" 2>&1 &
  pid=$!
  wait_listen "$P_GRPC" "$pid" "loadgen serve grpc" || { kill "$pid" 2>/dev/null; return 1; }
  local ok=0
  one "$c" "$t" "$r" "$@" || ok=1
  kill -INT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  ((ok == 0)) || return 0
  srv=$(sed -n 's/.* \([0-9]*\) ping-pong messages.*/\1/p' "$b.srv")
  case $t in
    loadgen) read -r sent recv < <(jq -r --argjson w "$STREAM_WIRE" '"\(.summary.bytes_written/$w|floor) \(.summary.bytes_read/$w|floor)"' "$b.json" 2>/dev/null) ;;
    ghz-*) read -r sent recv < <(jq -r --argjson n "${t#ghz-}" '"\(.count*$n) \((.statusCodeDistribution.OK // 0)*$n)"' "$b.json" 2>/dev/null) ;;
  esac
  printf '%-15s %-8s %3s %10s %10s %10s\n' "$c" "$t" "$r" "${sent:-0}" "${recv:-0}" "${srv:-0}" >>"$OUT/stream.txt"
}
case_grpc_stream() {
  local c name body
  body=$(head -c "$STREAM_SIZE" /dev/zero | base64 -w0)
  # 1,000 messages in flight on one connection: ghz-1000's one pipelined
  # stream beside loadgen's 1,000 ping-pong streams (-m 1000), one message
  # in flight on each; every stream ready in a turn goes out in one write.
  name=grpc-stream-c1m1000
  if [[ -z $ONLY || $name =~ $ONLY ]]; then
    for ((r = 1; r <= REPS; r++)); do
      [[ -x $W/bin/ghz ]] && one_stream "$name" ghz-1000 "$r" "$W/bin/ghz" --insecure --call loadgen.echo.v1.Echo/PingPong \
        -d "{\"body\":\"$body\"}" --stream-call-count 1000 -z "${DUR}s" --duration-stop wait --count-errors \
        -c 1 --connections 1 --format json -o "@B@.json" "$H:$P_GRPC"
      one_stream "$name" loadgen "$r" "$LG" run -p grpc-stream --size "$STREAM_SIZE" -t1 -c1 -m1000 -d"${DUR}s" \
        --latency -q --json "@B@.json" "$H:$P_GRPC"
    done
  fi
  for c in 1 50; do
    name=grpc-stream-c$c
    [[ -n $ONLY && ! $name =~ $ONLY ]] && continue
    for ((r = 1; r <= REPS; r++)); do
      if [[ -x $W/bin/ghz ]]; then
        for n in 1 1000; do
          one_stream "$name" "ghz-$n" "$r" "$W/bin/ghz" --insecure --call loadgen.echo.v1.Echo/PingPong \
            -d "{\"body\":\"$body\"}" --stream-call-count "$n" -z "${DUR}s" --duration-stop wait --count-errors \
            -c "$c" --connections "$c" --format json -o "@B@.json" "$H:$P_GRPC"
        done
      fi
      one_stream "$name" loadgen "$r" "$LG" run -p grpc-stream --size "$STREAM_SIZE" -t1 -c"$c" -d"${DUR}s" \
        --latency -q --json "@B@.json" "$H:$P_GRPC"
    done
  done
}
case_grpc_stream

# Our own target must not be the bottleneck: loadgen's httpbin on TGT_CPU,
# loadgen on GEN_CPU; both sides' requests per CPU-second.
case_httpbin() {
  local name=httpbin-c50 port=18181
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  taskset -c "$TGT_CPU" "$LG" serve httpbin --addr "$H:$port" --for $((REPS * (DUR + 30) + 60))s >"$OUT/httpbin.out" 2>&1 &
  local pid=$!
  wait_listen "$port" "$pid" "loadgen serve httpbin" || { kill "$pid" 2>/dev/null; return 0; }
  local t0 t1
  for ((r = 1; r <= REPS; r++)); do
    t0=$(ticks "$pid")
    one "$name" loadgen "$r" "$LG" run -t1 -c50 -d"${DUR}s" --latency -q "http://$H:$port/bytes/100" || continue # no run, no target row
    t1=$(ticks "$pid")
    target_row "$name" httpbin "$r" "$t0" "$t1"
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
case_httpbin

# HTTP/3 (issue 40, point 6): loadgen -p h3 against loadgen's httpbin
# serving h3 (quic-go's server) on TGT_CPU, /bytes/100, beside the best
# HTTP/3 client this machine can have: Debian's curl and h2load are built
# without QUIC, so the peer is quic-go's own HTTP/3 client (http3.Transport,
# as its example client uses it) driven by bench/soak's h3load, one QUIC
# connection per closed loop. Both are quic-go: the ratio is loadgen's
# engine over the library's bare client, per CPU-second.
case_h3() {
  local name=h3-c10 port=18444
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  taskset -c "$TGT_CPU" "$LG" serve httpbin --tls --addr "$H:$port" --for $((REPS * 2 * (DUR + 30) + 60))s >"$OUT/httpbin-h3.out" 2>&1 &
  local pid=$!
  wait_listen "$port" "$pid" "loadgen serve httpbin --tls" || { kill "$pid" 2>/dev/null; return 0; }
  local url=https://$H:$port/bytes/100
  for ((r = 1; r <= REPS; r++)); do
    one "$name" quic-go "$r" "$W/soak" h3load -c 10 -d "${DUR}s" "$url"
    one "$name" loadgen "$r" "$LG" run -p h3 -k -t1 -c10 -d"${DUR}s" --latency -q "$url"
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
case_h3

# TCP_RR: one 1 KiB round trip at a time on one connection, each client
# against its own server on TGT_CPU (sockperf's figure is one-way latency:
# doubled); TCP_STREAM: Gbit/s per sender CPU-second, iperf3 against
# loadgen with 128 KiB writes into a sink (tcpstream-c1), and with 1 KiB
# writes, the cni-matrix study's message size (tcpstream-1k): there each
# write is a system call, and Nagle's algorithm (kept by both, as by
# netperf's TCP_STREAM) coalesces them into full segments.
tcp_stream() { # case rep size(iperf3 -l) size(loadgen --size)
  local c=$1 r=$2
  taskset -c "$TGT_CPU" iperf3 -s -1 -p "$P_IPERF" >"$OUT/iperf3.srv.$c.r$r" 2>&1 &
  local ip=$!
  wait_listen "$P_IPERF" "$ip" "iperf3 -s" || { kill "$ip" 2>/dev/null; return 0; }
  one "$c" iperf3 "$r" iperf3 -c "$H" -p "$P_IPERF" -t "$DUR" -l "$3" -J
  wait "$ip" 2>/dev/null
  one "$c" loadgen "$r" "$LG" run -p tcp-stream --size "$4" -t1 -c1 -d"${DUR}s" -q "$H:$P_TCP"
}
case_tcp() {
  [[ -n $ONLY && ! tcprr-c1 =~ $ONLY && ! tcpstream-c1 =~ $ONLY && ! tcpstream-1k =~ $ONLY ]] && return 0
  taskset -c "$TGT_CPU" sockperf server --tcp -i "$H" -p "$P_SP" >"$OUT/sockperf.srv" 2>&1 &
  local sp=$!
  taskset -c "$TGT_CPU" "$LG" serve tcp --addr "$H:$P_TCP" --for $((REPS * 6 * (DUR + 5) + 30))s >"$OUT/tcp.out" 2>&1 &
  local lt=$!
  if ! wait_listen "$P_TCP" "$lt" "loadgen serve tcp" || ! wait_listen "$P_SP" "$sp" "sockperf server"; then
    kill "$sp" "$lt" 2>/dev/null
    return 0
  fi
  for ((r = 1; r <= REPS; r++)); do
    [[ -z $ONLY || tcprr-c1 =~ $ONLY ]] && {
      one tcprr-c1 sockperf "$r" sh -c "sockperf ping-pong --tcp -i $H -p $P_SP -m 1024 -t $DUR --mps max 2>&1"
      one tcprr-c1 loadgen "$r" "$LG" run -p tcp-rr --size 1KiB -t1 -c1 -d"${DUR}s" --latency -q "$H:$P_TCP"
    }
    [[ -z $ONLY || tcpstream-c1 =~ $ONLY ]] && tcp_stream tcpstream-c1 "$r" 128K 128KiB
    [[ -z $ONLY || tcpstream-1k =~ $ONLY ]] && tcp_stream tcpstream-1k "$r" 1K 1KiB
  done
  kill "$sp" "$lt" 2>/dev/null; wait "$sp" "$lt" 2>/dev/null
}
case_tcp

# Which CPU is the generator's: loadgen and fortio at CPU_RATE (open loop,
# c50, the open-loop rows' flags), each counted four ways in the same run:
# user+sys from rusage (what perf prints of the child: the scheduler's
# sum_exec_runtime), perf's task-clock, GEN_CPU's busy time in /proc/stat,
# and what the spinner lost (taken). Alternating, with the spinner stopped
# (the CPU idles between sends: rusage, task-clock, busy) and running (a
# CPU kept busy, as a proxy beside the generator keeps it: rusage,
# task-clock, taken). Needs perf; the rows land in cpucount.txt.
CPU_RATE=${CPU_RATE:-20000}
cpu_busy() { awk -v c="cpu$GEN_CPU" '$1==c {print $2+$3+$4+$7+$8}' /proc/stat; }
cpucount_run() { # case tool rep spinner(0|1) cmd...
  local c=$1 t=$2 r=$3 sp=$4; shift 4
  local b=$OUT/$c.$t.r$r.s$sp t0 t1 k0 k1 taken=- n
  set -- "${@//@B@/$b}"
  ((sp)) || kill -STOP "$SOAK_PID"
  sleep "$SOAK_GAP"
  k0=$(cpu_busy); t0=$(date +%s%N)
  timeout -k 5 -s INT $((DUR + 20)) perf stat -e task-clock -o "$b.perf" -- taskset -c "$GEN_CPU" "$@" >"$b.out" 2>"$b.err"
  t1=$(date +%s%N); k1=$(cpu_busy)
  sleep "$SOAK_GAP"; sleep 0.2
  ((sp)) || kill -CONT "$SOAK_PID"
  ((sp)) && read -r taken _ < <("$W/soak" taken -around "${SOAK_GAP}s" "$OUT/soak.txt" "$t0" "$t1" 2>>"$b.err")
  read -r _ _ _ n < <(parse "$b.out")
  awk -v c="$c" -v t="$t" -v r="$r" -v sp="$sp" -v n="$n" -v busy=$(((k1 - k0))) -v hz="$(getconf CLK_TCK)" -v tk="${taken:--}" '
    /task-clock/ { gsub(",", "", $1); tc=$1/1000 } / seconds user/ { u=$1 } / seconds sys/ { s=$1 }
    END { printf "%-10s %-8s %3s %7s %9d %8.3f %10.3f %8s %8s\n", c, t, r, (sp ? "running" : "stopped"), n, u+s, tc, (sp ? "-" : sprintf("%.3f", busy/hz)), tk }' "$b.perf" |
    tee -a "$OUT/cpucount.txt" >&2
}
case_cpucount() {
  local name=cpu-$((CPU_RATE / 1000))k url=http://$H:$P_H1$TGT_PATH sp
  [[ -n $ONLY && ! $name =~ $ONLY ]] && return 0
  if ! ((SOAK)) || ! command -v perf >/dev/null || ! [[ -x $W/bin/fortio ]]; then
    log "$name: needs the spinner (SOAK=1), perf and fortio; skipped"
    return 0
  fi
  printf '%-10s %-8s %3s %7s %9s %8s %10s %8s %8s\n' case tool rep spinner requests rusage task_clock busy taken >"$OUT/cpucount.txt"
  for ((r = 1; r <= REPS; r++)); do
    for sp in 0 1; do
      cpucount_run "$name" fortio "$r" "$sp" "$W/bin/fortio" load -loglevel Warning -qps "$CPU_RATE" -c 50 -uniform -nocatchup \
        -t "${DUR}s" -r 0.00001 -p 50,99 -json @B@.json "$url"
      cpucount_run "$name" loadgen "$r" "$sp" "$LG" run -t1 -c50 -R "$CPU_RATE" -d "${DUR}s" -q "$url"
    done
  done
}
case_cpucount

# ------------------------------------------------------------ summary
log "done; raw output in $OUT"
echo
echo "# medians over $REPS runs; req/cpu_s = requests per generator CPU-second; sleeps/req = its voluntary context switches per request"
awk 'NR>1 { k=$1" "$2; rps[k]=rps[k]" "$4; p50[k]=p50[k]" "$5; p99[k]=p99[k]" "$6; per[k]=per[k]" "$8; cases[$1]=1; tools[$2]=1; rp[k" "$3]=$8; rq[k" "$3]=$5; reps[$3]=1
    if ($10 > 0) { pt[k]=pt[k]" "$10; rt[k" "$3]=$10 }
    if (NF >= 11 && $11 != "-") sl[k]=sl[k]" "$11 }
  # the same by what the spinner lost (taken_s), where both runs have it
  function spreadt(a, b,   r, x, lo, hi, n) { n=0; for (r in reps) if (((a" "r) in rt) && ((b" "r) in rt)) { x=rt[a" "r]/rt[b" "r]; if (!n || x<lo) lo=x; if (!n || x>hi) hi=x; n++ }; return n ? sprintf("runs %.2f-%.2f", lo, hi) : "" }
  function bytaken(a, b) { return ((a in pt) && (b in pt) && med(pt[b]) > 0) ? sprintf("  req/taken_s %.2f (%s)", med(pt[a])/med(pt[b]), spreadt(a, b)) : "" }
  # spread: the ratio of each alternating pair of runs (rep r of both), lowest to highest
  function spread(a, b,   r, x, lo, hi, n) { n=0; for (r in reps) if (((a" "r) in rp) && ((b" "r) in rp) && rp[b" "r] > 0) { x=rp[a" "r]/rp[b" "r]; if (!n || x<lo) lo=x; if (!n || x>hi) hi=x; n++ }; return n ? sprintf("runs %.2f-%.2f", lo, hi) : "" }
  function med(s,   a, n, i, j, t) { n=split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}; return n ? (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) : 0 }
  END {
    printf "%-14s %-8s %10s %9s %9s %10s %10s %10s\n", "case", "tool", "rps", "p50_ms", "p99_ms", "req/cpu_s", "req/taken", "sleeps/req"
    for (c in cases) for (t in tools) { k=c" "t; if (k in rps) printf "%-14s %-8s %10.0f %9.3f %9.3f %10.0f %10s %10s\n", c, t, med(rps[k]), med(p50[k]), med(p99[k]), med(per[k]), ((k in pt) ? sprintf("%.0f", med(pt[k])) : "-"), ((k in sl) ? sprintf("%.3f", med(sl[k])) : "-") }
    print ""
    for (c in cases) for (t in tools) { if (t == "loadgen" || t == "httpbin" || t == "nginx") continue
      a=c" loadgen"; b=c" "t; if ((a in per) && (b in per) && med(per[b]) > 0)
      printf "%-14s loadgen/%s: req/cpu_s %.2f (%s)%s  rps %.2f  p50 %s\n", c, t, med(per[a])/med(per[b]), spread(a, b), bytaken(a, b), med(rps[a])/med(rps[b]), (med(p50[b]) > 0 ? sprintf("%+.3f ms", med(p50[a])-med(p50[b])) : "-") }
    # against the better of two or more peers (per generator CPU-second)
    for (c in cases) { a=c" loadgen"; best=""; np=0
      for (t in tools) { b=c" "t; if (t == "loadgen" || t == "httpbin" || t == "nginx" || !(b in per)) continue
        np++; if (best == "" || med(per[b]) > med(per[c" "best])) best=t }
      if (np >= 2 && (a in per) && med(per[c" "best]) > 0)
        printf "%-14s loadgen/better peer (%s): req/cpu_s %.2f (%s)%s\n", c, best, med(per[a])/med(per[c" "best]), spread(a, c" "best), bytaken(a, c" "best) }
    for (c in cases) { a=c" loadgen"; b=c" httpbin"; if ((a in per) && (b in per) && med(per[a]) > 0)
      printf "%-14s httpbin/loadgen: req/cpu_s %.2f (%s; the target must keep up: >= 1.0)\n", c, med(per[b])/med(per[a]), spread(b, a) }
    for (c in cases) { a=c" loadgen"; b=c" nginx"; if ((a in per) && (b in per) && med(per[a]) > 0)
      printf "%-14s nginx/loadgen: req/cpu_s %.2f (%s; a C server on the same kernel path)\n", c, med(per[b])/med(per[a]), spread(b, a) }
    # TCP_RR is compared by its round trip: the p50 of loadgen over that of
    # sockperf, the medians and the spread of the alternating pairs
    for (c in cases) { a=c" loadgen"; b=c" sockperf"; if (!(a in p50) || !(b in p50) || med(p50[b]) <= 0) continue
      n=0; for (r in reps) if (((a" "r) in rq) && ((b" "r) in rq) && rq[b" "r] > 0) { x=rq[a" "r]/rq[b" "r]; if (!n || x<lo) lo=x; if (!n || x>hi) hi=x; n++ }
      printf "%-14s loadgen/sockperf: round trip p50 %.2f (runs %.2f-%.2f; %.0f against %.0f us; goal <= 1.1)\n", c, med(p50[a])/med(p50[b]), lo, hi, med(p50[a])*1000, med(p50[b])*1000 }
    if (("httpbin-c50 httpbin" in per) && ("h1-c50 nginx" in per) && med(per["h1-c50 nginx"]) > 0)
      printf "%-14s httpbin/nginx: req/cpu_s %.2f (each serving loadgen at c50, /bytes/100 and nginx return 200)\n", "httpbin-c50", med(per["httpbin-c50 httpbin"])/med(per["h1-c50 nginx"])
  }' "$OUT/table.txt" | tee "$OUT/summary.txt"

# Peak RSS at c10000: medians, loadgen's over wrk's (goal <= 1.5); the
# slowest of loadgen's connects.
[[ -s $OUT/rss.txt ]] && awk '$1 == "h1-c10k" { k=$2; rss[k]=rss[k]" "$4 }
  function med(s,   a, n, i, j, t) { n=split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]+0<a[i]+0) {t=a[i];a[i]=a[j];a[j]=t}; return n ? (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) : 0 }
  END { if (("loadgen" in rss) && ("wrk" in rss) && med(rss["wrk"]) > 0)
    printf "%-14s loadgen/wrk: peak RSS %.2f (%.0f vs %.0f MiB; goal <= 1.5)\n", "h1-c10k", med(rss["loadgen"])/med(rss["wrk"]), med(rss["loadgen"])/1024, med(rss["wrk"])/1024 }' "$OUT/rss.txt" | tee -a "$OUT/summary.txt"
for f in "$OUT"/h1-c10k.loadgen.r*.json; do
  [[ -s $f ]] && jq -r --arg f "${f##*/}" '"\($f): slowest connect \(.summary.connect.max_us/1000) ms, \(.summary.connections.established) established"' "$f" 2>/dev/null
done | tee -a "$OUT/summary.txt"

# Open loop: medians of what was achieved, late, p99 and CPU per 1,000
# requests; loadgen's CPU per request over each peer's (goal <= 0.5), with
# the spread of the alternating pairs.
awk -v wake="$(awk '{print $1}' "$OUT/wake.txt" 2>/dev/null)" 'NR>1 { k=$1" "$2; ask[$1]=$4; ach[k]=ach[k]" "$5; late[k]=late[k]" "$6; p99[k]=p99[k]" "$7; ms[k]=ms[k]" "$9; sl[k]=sl[k]" "$12; ps[k]=ps[k]" "$13; cases[$1]=1; tools[$2]=1; rp[k" "$3]=$9; reps[$3]=1
    if ($11 > 0) { mt[k]=mt[k]" "$11; rt[k" "$3]=$11 } }
  function spreadt(a, b,   r, x, lo, hi, n) { n=0; for (r in reps) if (((a" "r) in rt) && ((b" "r) in rt)) { x=rt[a" "r]/rt[b" "r]; if (!n || x<lo) lo=x; if (!n || x>hi) hi=x; n++ }; return n ? sprintf("runs %.2f-%.2f", lo, hi) : "" }
  function med(s,   a, n, i, j, t) { n=split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]+0<a[i]+0) {t=a[i];a[i]=a[j];a[j]=t}; return n ? (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) : 0 }
  function spread(a, b,   r, x, lo, hi, n) { n=0; for (r in reps) if (((a" "r) in rp) && ((b" "r) in rp) && rp[b" "r] > 0) { x=rp[a" "r]/rp[b" "r]; if (!n || x<lo) lo=x; if (!n || x>hi) hi=x; n++ }; return n ? sprintf("runs %.2f-%.2f", lo, hi) : "" }
  # kept up: achieved at least 80% of the rate (fortio reaches 85% at 50,000/s here)
  function kept(k,   c) { split(k, c, " "); return med(ach[k]) >= 0.8*ask[c[1]] }
  END {
    if (!length(cases)) exit
    print ""
    printf "%-14s %-8s %8s %9s %7s %9s %11s %11s\n", "open loop", "tool", "asked", "achieved", "late", "p99_ms", "ms_cpu/1k", "ms_taken/1k"
    for (c in cases) for (t in tools) { k=c" "t; if (k in ms) printf "%-14s %-8s %8d %8.2f%% %7s %9.3f %11.2f %11s\n", c, t, ask[c], 100*med(ach[k])/ask[c], med(late[k]), med(p99[k]), med(ms[k]), ((k in mt) ? sprintf("%.2f", med(mt[k])) : "-") }
    for (c in cases) for (t in tools) { k=c" "t; if (wake > 0 && (k in ms) && med(ms[k]) > 0 && kept(k))
      printf "%-14s %-8s %.3f sleeps a request x %.1f us a timer wake-up = %.2f of its %.2f us a request; the rest %.2f us\n", c, t, med(sl[k]), wake, med(sl[k])*wake, med(ms[k]), med(ms[k])-med(sl[k])*wake }
    # the CPU of a run at 1,000/s over one at 20,000/s (goal for loadgen: about 1/20)
    for (t in tools) { a="open1k-c50 "t; b="open20k-c50 "t; if ((a in ms) && (b in ms) && med(ms[b]) > 0 && kept(a) && kept(b))
      printf "%-14s %-8s a run at 1000/s costs %.3f of one at 20000/s (goal for loadgen: about 0.05)\n", "open1k/20k", t, med(ms[a])*1000/(med(ms[b])*20000) }
    for (c in cases) for (t in tools) { if (t == "loadgen") continue; a=c" loadgen"; b=c" "t
      if ((a in ms) && (b in ms) && !kept(b)) { printf "%-14s loadgen/%s: not compared, %s reached %.2f%% of the rate (a tool behind its schedule sends less, and each request costs it more)\n", c, t, t, 100*med(ach[b])/ask[c]; continue }
      if ((a in ms) && (b in ms) && med(ms[b]) > 0)
        printf "%-14s loadgen/%s: CPU per request %.2f (%s)%s; goal <= 0.5  achieved %.2f%% vs %.2f%%  p99 from the send %.3f vs %.3f ms (loadgen, from the intended start: %.3f)\n", c, t, med(ms[a])/med(ms[b]), spread(a, b), (((a in mt) && (b in mt) && med(mt[b]) > 0) ? sprintf(", by taken %.2f (%s)", med(mt[a])/med(mt[b]), spreadt(a, b)) : ""), 100*med(ach[a])/ask[c], 100*med(ach[b])/ask[c], med(ps[a]), med(ps[b]), med(p99[a]) }
  }' "$OUT/open.txt" | tee -a "$OUT/summary.txt"

# gRPC streams: the messages each tool sent and received beside those the
# target answered, medians over the runs, and the largest gap between a
# tool's count of replies and the target's in any run.
awk 'NR>1 { k=$1" "$2; s[k]=s[k]" "$4; rv[k]=rv[k]" "$5; tg[k]=tg[k]" "$6; d=$6-$5; if (d<0) d=-d; if (d>gap[k]) gap[k]=d; keys[k]=1 }
  function med(s,   a, n, i, j, t) { n=split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]+0<a[i]+0) {t=a[i];a[i]=a[j];a[j]=t}; return n ? (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) : 0 }
  END {
    if (!length(keys)) exit
    print ""
    printf "%-15s %-8s %10s %10s %10s %8s\n", "gRPC stream", "tool", "sent", "received", "target", "max_gap"
    for (k in keys) { split(k, x, " "); printf "%-15s %-8s %10d %10d %10d %8d\n", x[1], x[2], med(s[k]), med(rv[k]), med(tg[k]), gap[k] }
  }' "$OUT/stream.txt" | tee -a "$OUT/summary.txt"

# Which CPU: each way's medians in µs per request, and loadgen's over
# fortio's by each (a bench with the spinner only).
[[ -s $OUT/cpucount.txt ]] && awk 'NR>1 { k=$2" "$4; n=$5; if (n <= 0) next; t[k]=1
    u[k]=u[k]" "$6*1e6/n; tc[k]=tc[k]" "$7*1e6/n; if ($8 != "-") b[k]=b[k]" "$8*1e6/n; if ($9 != "-") tk[k]=tk[k]" "$9*1e6/n }
  function med(s,   a, n, i, j, x) { n=split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]+0<a[i]+0) {x=a[i];a[i]=a[j];a[j]=x}; return n ? (n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2) : 0 }
  function col(a, k) { return (k in a) ? sprintf("%.2f", med(a[k])) : "-" }
  function rat(a, x, y) { return ((x in a) && (y in a) && med(a[y]) > 0) ? sprintf("%.2f", med(a[x])/med(a[y])) : "-" }
  END {
    if (!length(t)) exit
    print ""
    printf "%-22s %8s %10s %8s %8s   (µs of CPU per request)\n", "which CPU", "rusage", "task_clock", "busy", "taken"
    for (k in t) printf "%-22s %8s %10s %8s %8s\n", k, col(u, k), col(tc, k), col(b, k), col(tk, k)
    split("stopped running", sp, " ")
    for (i = 1; i <= 2; i++) { x="loadgen "sp[i]; y="fortio "sp[i]
      printf "loadgen/fortio, spinner %-7s %8s %10s %8s %8s\n", sp[i], rat(u, x, y), rat(tc, x, y), rat(b, x, y), rat(tk, x, y) }
  }' "$OUT/cpucount.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
if [[ -s $OUT/failed.txt ]]; then
  echo
  echo "runs that failed, left out of the medians above (case tool rep: why; output in $OUT):"
  cat "$OUT/failed.txt"
fi | tee -a "$OUT/summary.txt"
exit 0
