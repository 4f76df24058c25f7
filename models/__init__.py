"""Models built on `mva` (TPC-C SMP of seed 002 first). The library never imports this package."""
