"""AMD hardware catalog: targets, MFMA/WMMA layouts, the LDS model."""
