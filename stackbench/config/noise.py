"""The noise thresholds, defined once: the verdicts judge a difference against them
(analysis/verdicts.py), and the judge of a level asks whether a disturbance could have moved
its figure by as much (engine/judge.py)."""

# A difference in throughput within 2% is noise (criterion's noise threshold).
THROUGHPUT_THRESHOLD = 0.02
# ...and one in a latency percentile within 5%.
PERCENTILE_THRESHOLD = 0.05
