# per-filter statistics with the library preloaded (a TAP test: the
# regress suite's cluster does not preload it)
. test/lib/tap.sh
bf_tap test/t/008_stats.pl
