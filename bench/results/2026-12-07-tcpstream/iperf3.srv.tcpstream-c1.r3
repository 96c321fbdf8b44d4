-----------------------------------------------------------
Server listening on 18302 (test #1)
-----------------------------------------------------------
Accepted connection from 127.0.0.1, port 58104
[  5] local 127.0.0.1 port 18302 connected to 127.0.0.1 port 58114
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  2.42 GBytes  20.8 Gbits/sec                  
[  5]   1.00-2.00   sec  1.78 GBytes  15.3 Gbits/sec                  
[  5]   2.00-3.00   sec  1.35 GBytes  11.6 Gbits/sec                  
[  5]   3.00-4.00   sec  2.28 GBytes  19.6 Gbits/sec                  
[  5]   4.00-5.00   sec  2.47 GBytes  21.2 Gbits/sec                  
[  5]   5.00-6.00   sec  2.61 GBytes  22.5 Gbits/sec                  
[  5]   6.00-7.00   sec  2.57 GBytes  22.1 Gbits/sec                  
[  5]   7.00-8.00   sec  2.75 GBytes  23.6 Gbits/sec                  
[  5]   8.00-9.00   sec  2.71 GBytes  23.3 Gbits/sec                  
[  5]   9.00-10.00  sec  2.53 GBytes  21.7 Gbits/sec                  
[  5]  10.00-10.00  sec   896 KBytes  23.9 Gbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-10.00  sec  23.5 GBytes  20.2 Gbits/sec                  receiver
