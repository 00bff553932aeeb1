"""numbacast inside other tools: ``numbacast.cast`` in ``@njit`` code
(:mod:`~numbacast.integrations.njit`), scalar codecs for your own kernels
(:mod:`~numbacast.integrations.scalar`) and Dask arrays
(:mod:`~numbacast.integrations.dask_array`)."""
