"""Models built on `mva` (the TPC-C SMP of Du & Zhang 2001 first). The library never imports this package."""
