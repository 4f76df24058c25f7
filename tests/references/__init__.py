"""Independent references the tests check the library against: brute-force and textbook
MVA (reference, reference_amva), the TPC-C equations written out from the paper
(reference_tpcc), and random product-form networks (netgen).  None shares code with
the solvers they check."""
