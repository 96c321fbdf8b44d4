-----------------------------------------------------------
Server listening on 18302 (test #1)
-----------------------------------------------------------
Accepted connection from 127.0.0.1, port 60154
[  5] local 127.0.0.1 port 18302 connected to 127.0.0.1 port 60160
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  2.36 GBytes  20.3 Gbits/sec                  
[  5]   1.00-2.00   sec  2.27 GBytes  19.5 Gbits/sec                  
[  5]   2.00-3.00   sec  2.36 GBytes  20.3 Gbits/sec                  
[  5]   3.00-4.00   sec  2.35 GBytes  20.2 Gbits/sec                  
[  5]   4.00-5.00   sec  2.31 GBytes  19.8 Gbits/sec                  
[  5]   5.00-6.00   sec  2.36 GBytes  20.3 Gbits/sec                  
[  5]   6.00-7.00   sec  2.35 GBytes  20.2 Gbits/sec                  
[  5]   7.00-8.00   sec  2.38 GBytes  20.4 Gbits/sec                  
[  5]   8.00-9.00   sec  2.38 GBytes  20.4 Gbits/sec                  
[  5]   9.00-10.00  sec  2.23 GBytes  19.2 Gbits/sec                  
[  5]  10.00-10.00  sec   256 KBytes  26.5 Gbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-10.00  sec  23.3 GBytes  20.0 Gbits/sec                  receiver
