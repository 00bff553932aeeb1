"""The conversion engine: scalar codecs generated from the format descriptions
(:mod:`~numbacast.engine.codecs`), one conversion as a compile-time constant
(:mod:`~numbacast.engine.conversion`), the parallel kernels
(:mod:`~numbacast.engine.kernels`) and their disk cache
(:mod:`~numbacast.engine.cache`), argument checks
(:mod:`~numbacast.engine.checks`) and running a conversion over arrays
(:mod:`~numbacast.engine.arrays`)."""
