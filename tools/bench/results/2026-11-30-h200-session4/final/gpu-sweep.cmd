sieve bench --device gpu --db /tmp/calib-quick1 --max-gb 12 --csv gpu-sweep.csv
