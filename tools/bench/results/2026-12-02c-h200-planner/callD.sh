set -u
. tools/bench/device_env.sh > /dev/null
rm -rf /tmp/cq && $B/sieve create /tmp/cq --collection c --dim 8 > /dev/null
timeout 75 $B/sieve calibrate /tmp/cq --device gpu --quick > $OUT/calib-quick.json 2> $OUT/calib-quick.txt; echo "calibrate exit $?"; cat $OUT/calib-quick.txt
timeout 115 $B/sieve bench --device gpu --db /tmp/cq --max-gb 12 --time-limit-s 55 --csv $OUT/gpu-sweep.csv > $OUT/gpu-sweep.md 2> $OUT/gpu-sweep.txt; echo "bench exit $?"; grep -v "^|---" $OUT/gpu-sweep.md | head -20
cd $OUT && tar czf callD.tgz --remove-files calib-quick.json calib-quick.txt gpu-sweep.csv gpu-sweep.md gpu-sweep.txt
