# loadgen's image: one static binary, and Debian's iptables for
# `loadgen mesh capture` (the init container of `k8s run --mesh sidecar`).
# The target pods run `loadgen serve …` (httpbin, grpc, tcp), the workers
# of `loadgen k8s run` run `loadgen k8s worker -- run …`; `loadgen k8s
# render` writes both.
#
#   docker build -t registry.example/loadgen:dev . && docker push registry.example/loadgen:dev
#   loadgen k8s run --image registry.example/loadgen:dev …
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X loadgen/loadgen.version=${VERSION}" -o /out/loadgen ./cmd/loadgen

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends iptables && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/loadgen /loadgen
# The rendered pods run as this user with a read-only root filesystem.
USER 65532:65532
ENTRYPOINT ["/loadgen"]
CMD ["serve", "httpbin", "--addr", "0.0.0.0:8080"]
