"""The studies of the five papers, one ``python -m`` driver each, sharing one small
command line (:mod:`~calibration.studies.cli`):

* :mod:`~calibration.studies.tpcc`: Du, Zhang, Dong & Zhang, TPC-C on a bus-based SMP
  (JPDC 2001): the model fitted on Tables 10 and 12, judged on the rest;
* :mod:`~calibration.studies.tpcc_postgres`: the same model with every input traced from
  TPC-C on PostgreSQL, nothing fitted, judged on the paper's findings;
* :mod:`~calibration.studies.tpcc_cpu_centre`: the same model with its CPU centre from the
  simulator;
* :mod:`~calibration.studies.tpcw`: Foglia, Giorgi & Prete, TPC-W on shared-bus SMPs
  (IEE Proc. 2004): the paper's findings on the EC-server preset;
* :mod:`~calibration.studies.shared_bus`: the shared-bus model against its simulator;
* :mod:`~calibration.studies.ccnuma`: Talbot & Kelly, first-touch placement and reactive
  proxies on cc-NUMA (1999);
* :mod:`~calibration.studies.svm`: Bilas, Jiang, Zhou & Singh, software shared memory by
  layers (HPCA 1999), the paper's tables and figures measured on the SVM machine
  (:mod:`~calibration.studies.svm_machine`);
* :mod:`~calibration.studies.cmt`: Fedorova, Seltzer, Small & Nussbaum, chip
  multithreading (Harvard TR-17-04, 2004), with its program corpus and leave-programs-out
  evaluation (:mod:`~calibration.studies.cmt_corpus`) and the paper's pipeline and L1
  experiments (:mod:`~calibration.studies.cmt_sections`).

Exit status of every study: 0 when it ran (whatever its findings' verdicts: a finding
that fails is a result, not an error), 2 for bad input (one line naming the option).
"""
