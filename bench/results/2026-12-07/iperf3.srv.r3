-----------------------------------------------------------
Server listening on 18302 (test #1)
-----------------------------------------------------------
Accepted connection from 127.0.0.1, port 42428
[  5] local 127.0.0.1 port 18302 connected to 127.0.0.1 port 42430
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  2.39 GBytes  20.5 Gbits/sec                  
[  5]   1.00-2.00   sec  2.47 GBytes  21.3 Gbits/sec                  
[  5]   2.00-3.00   sec  2.45 GBytes  21.1 Gbits/sec                  
[  5]   3.00-4.00   sec  2.40 GBytes  20.6 Gbits/sec                  
[  5]   4.00-5.00   sec  2.36 GBytes  20.3 Gbits/sec                  
[  5]   5.00-6.00   sec  2.47 GBytes  21.2 Gbits/sec                  
[  5]   6.00-7.00   sec  2.53 GBytes  21.7 Gbits/sec                  
[  5]   7.00-8.00   sec  2.53 GBytes  21.8 Gbits/sec                  
[  5]   8.00-9.00   sec  2.54 GBytes  21.8 Gbits/sec                  
[  5]   9.00-10.00  sec  2.47 GBytes  21.2 Gbits/sec                  
[  5]  10.00-10.00  sec   704 KBytes  13.0 Gbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-10.00  sec  24.6 GBytes  21.1 Gbits/sec                  receiver
