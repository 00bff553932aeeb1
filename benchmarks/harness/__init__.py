"""The bench harness behind ``python -m numbacast bench`` (tooling: not part of
the installed package, so editing it never touches the kernel cache).

* :mod:`~benchmarks.harness.bench` -- the table of speed targets;
* :mod:`~benchmarks.harness.baselines` -- the casts it times: numbacast's, the
  trivial same-traffic kernels and the peers';
* :mod:`~benchmarks.harness.plot` -- the table as bar charts.
"""
