-----------------------------------------------------------
Server listening on 18302 (test #1)
-----------------------------------------------------------
Accepted connection from 127.0.0.1, port 41966
[  5] local 127.0.0.1 port 18302 connected to 127.0.0.1 port 41968
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   390 MBytes  3.27 Gbits/sec                  
[  5]   1.00-2.00   sec   387 MBytes  3.25 Gbits/sec                  
[  5]   2.00-3.00   sec   397 MBytes  3.33 Gbits/sec                  
[  5]   3.00-4.00   sec   390 MBytes  3.27 Gbits/sec                  
[  5]   4.00-5.00   sec   394 MBytes  3.31 Gbits/sec                  
[  5]   5.00-6.00   sec   398 MBytes  3.34 Gbits/sec                  
[  5]   6.00-7.00   sec   404 MBytes  3.39 Gbits/sec                  
[  5]   7.00-8.00   sec   391 MBytes  3.28 Gbits/sec                  
[  5]   8.00-9.00   sec   349 MBytes  2.93 Gbits/sec                  
[  5]   9.00-10.00  sec   368 MBytes  3.09 Gbits/sec                  
[  5]  10.00-10.00  sec  7.00 KBytes  1.08 Gbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-10.00  sec  3.78 GBytes  3.24 Gbits/sec                  receiver
