-----------------------------------------------------------
Server listening on 18302 (test #1)
-----------------------------------------------------------
Accepted connection from 127.0.0.1, port 44906
[  5] local 127.0.0.1 port 18302 connected to 127.0.0.1 port 44918
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec   378 MBytes  3.17 Gbits/sec                  
[  5]   1.00-2.00   sec   390 MBytes  3.27 Gbits/sec                  
[  5]   2.00-3.00   sec   372 MBytes  3.12 Gbits/sec                  
[  5]   3.00-4.00   sec   390 MBytes  3.27 Gbits/sec                  
[  5]   4.00-5.00   sec   370 MBytes  3.10 Gbits/sec                  
[  5]   5.00-6.00   sec   359 MBytes  3.01 Gbits/sec                  
[  5]   6.00-7.00   sec   351 MBytes  2.94 Gbits/sec                  
[  5]   7.00-8.00   sec   367 MBytes  3.08 Gbits/sec                  
[  5]   8.00-9.00   sec   401 MBytes  3.37 Gbits/sec                  
[  5]   9.00-10.00  sec   398 MBytes  3.34 Gbits/sec                  
[  5]  10.00-10.00  sec  59.0 KBytes  2.37 Gbits/sec                  
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate
[  5]   0.00-10.00  sec  3.69 GBytes  3.17 Gbits/sec                  receiver
