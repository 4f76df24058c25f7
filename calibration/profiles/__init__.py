"""Model values from simulator runs (or measurements): one module per model kind.

* :mod:`~calibration.profiles.shared_bus`: the bus-work profile and residual factor of
  :mod:`models.shared_bus` from bus-machine runs;
* :mod:`~calibration.profiles.tpcc_smp`: :mod:`models.tpcc_smp` fitted to the paper's
  tables, and its FESC CPU centre from bus-machine runs of the DB workload;
* :mod:`~calibration.profiles.ccnuma`: visits and demands of :mod:`models.ccnuma` from a
  cc-NUMA run, barrier phase by barrier phase;
* :mod:`~calibration.profiles.svm_cluster`: the application counters of
  :mod:`models.svm_cluster` from an HLRC and an SC run;
* :mod:`~calibration.profiles.cmt_core`: :mod:`models.cmt_core` from reuse profiles.

A profile module imports the simulator (:mod:`calibration.sim`), the fitting
(:mod:`calibration.fit`) and the model kinds; nothing here prints or parses a command
line (that is :mod:`calibration.studies`).
"""
