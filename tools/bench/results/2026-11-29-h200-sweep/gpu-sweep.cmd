sieve bench --device gpu --db /tmp/cq1 --rows-list 200000,1000000,10000000 --dims 128,512 --mode both --csv gpu-sweep.csv --time-limit-s 200
