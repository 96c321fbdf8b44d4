-----------------------------------------------------------
Server listening on 18302 (test #1)
-----------------------------------------------------------
Accepted connection from 127.0.0.1, port 34050
[  5] local 127.0.0.1 port 18302 connected to 127.0.0.1 port 34060
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  2.14 GBytes  18.4 Gbits/sec                  
[  5]   1.00-2.00   sec  2.33 GBytes  20.0 Gbits/sec                  
[  5]   2.00-3.00   sec  2.09 GBytes  18.0 Gbits/sec                  
[  5]   3.00-4.00   sec  2.51 GBytes  21.5 Gbits/sec                  
[  5]   4.00-5.00   sec  2.39 GBytes  20.5 Gbits/sec                  
[  5]   5.00-6.00   sec  2.71 GBytes  23.3 Gbits/sec                  
[  5]   6.00-7.00   sec  2.55 GBytes  21.9 Gbits/sec                  
[  5]   7.00-8.00   sec  2.61 GBytes  22.4 Gbits/sec                  
[  5]   8.00-9.00   sec  2.67 GBytes  22.9 Gbits/sec                  
[  5]   9.00-10.00  sec  2.62 GBytes  22.5 Gbits/sec                  
[  5]  10.00-10.00  sec   320 KBytes  16.3 Gbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-10.00  sec  24.6 GBytes  21.1 Gbits/sec                  receiver
