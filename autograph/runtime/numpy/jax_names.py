"""The functions of numpy, numpy.linalg and numpy.fft that jax.numpy 0.10.2 also
implements: the coverage target. Written by `python -m autograph.runtime.numpy.coverage
--jax autograph/runtime/numpy/jax_names.py` (needs jax), so that `--missing` does not."""

JAX_NUMPY = """
numpy.abs numpy.absolute numpy.acos numpy.acosh numpy.add numpy.all numpy.allclose numpy.amax
numpy.amin numpy.angle numpy.any numpy.append numpy.apply_along_axis numpy.apply_over_axes
numpy.arange numpy.arccos numpy.arccosh numpy.arcsin numpy.arcsinh numpy.arctan numpy.arctan2
numpy.arctanh numpy.argmax numpy.argmin numpy.argpartition numpy.argsort numpy.argwhere
numpy.around numpy.array numpy.array_equal numpy.array_equiv numpy.array_repr
numpy.array_split numpy.array_str numpy.asarray numpy.asin numpy.asinh numpy.astype numpy.atan
numpy.atan2 numpy.atanh numpy.atleast_1d numpy.atleast_2d numpy.atleast_3d numpy.average
numpy.bartlett numpy.bincount numpy.bitwise_and numpy.bitwise_count numpy.bitwise_invert
numpy.bitwise_left_shift numpy.bitwise_not numpy.bitwise_or numpy.bitwise_right_shift
numpy.bitwise_xor numpy.blackman numpy.block numpy.broadcast_arrays numpy.broadcast_shapes
numpy.broadcast_to numpy.can_cast numpy.cbrt numpy.ceil numpy.choose numpy.clip
numpy.column_stack numpy.compress numpy.concat numpy.concatenate numpy.conj numpy.conjugate
numpy.convolve numpy.copy numpy.copysign numpy.corrcoef numpy.correlate numpy.cos numpy.cosh
numpy.count_nonzero numpy.cov numpy.cross numpy.cumprod numpy.cumsum numpy.cumulative_prod
numpy.cumulative_sum numpy.deg2rad numpy.degrees numpy.delete numpy.diag numpy.diag_indices
numpy.diag_indices_from numpy.diagflat numpy.diagonal numpy.diff numpy.digitize numpy.divide
numpy.divmod numpy.dot numpy.dsplit numpy.dstack numpy.ediff1d numpy.einsum numpy.einsum_path
numpy.empty numpy.empty_like numpy.equal numpy.exp numpy.exp2 numpy.expand_dims numpy.expm1
numpy.extract numpy.eye numpy.fabs numpy.fill_diagonal numpy.flatnonzero numpy.flip
numpy.fliplr numpy.flipud numpy.float_power numpy.floor numpy.floor_divide numpy.fmax
numpy.fmin numpy.fmod numpy.frexp numpy.from_dlpack numpy.frombuffer numpy.fromfile
numpy.fromfunction numpy.fromiter numpy.frompyfunc numpy.fromstring numpy.full numpy.full_like
numpy.gcd numpy.geomspace numpy.get_printoptions numpy.gradient numpy.greater
numpy.greater_equal numpy.hamming numpy.hanning numpy.heaviside numpy.histogram
numpy.histogram2d numpy.histogram_bin_edges numpy.histogramdd numpy.hsplit numpy.hstack
numpy.hypot numpy.i0 numpy.identity numpy.imag numpy.indices numpy.inner numpy.insert
numpy.interp numpy.intersect1d numpy.invert numpy.isclose numpy.iscomplex numpy.iscomplexobj
numpy.isdtype numpy.isfinite numpy.isin numpy.isinf numpy.isnan numpy.isneginf numpy.isposinf
numpy.isreal numpy.isrealobj numpy.isscalar numpy.issubdtype numpy.iterable numpy.ix_
numpy.kaiser numpy.kron numpy.lcm numpy.ldexp numpy.left_shift numpy.less numpy.less_equal
numpy.lexsort numpy.linspace numpy.load numpy.log numpy.log10 numpy.log1p numpy.log2
numpy.logaddexp numpy.logaddexp2 numpy.logical_and numpy.logical_not numpy.logical_or
numpy.logical_xor numpy.logspace numpy.mask_indices numpy.matmul numpy.matrix_transpose
numpy.matvec numpy.max numpy.maximum numpy.mean numpy.median numpy.meshgrid numpy.min
numpy.minimum numpy.mod numpy.modf numpy.moveaxis numpy.multiply numpy.nan_to_num
numpy.nanargmax numpy.nanargmin numpy.nancumprod numpy.nancumsum numpy.nanmax numpy.nanmean
numpy.nanmedian numpy.nanmin numpy.nanpercentile numpy.nanprod numpy.nanquantile numpy.nanstd
numpy.nansum numpy.nanvar numpy.ndim numpy.negative numpy.nextafter numpy.nonzero
numpy.not_equal numpy.ones numpy.ones_like numpy.outer numpy.packbits numpy.pad
numpy.partition numpy.percentile numpy.permute_dims numpy.piecewise numpy.place numpy.poly
numpy.polyadd numpy.polyder numpy.polydiv numpy.polyfit numpy.polyint numpy.polymul
numpy.polysub numpy.polyval numpy.positive numpy.pow numpy.power numpy.printoptions numpy.prod
numpy.promote_types numpy.ptp numpy.put numpy.put_along_axis numpy.quantile numpy.rad2deg
numpy.radians numpy.ravel numpy.ravel_multi_index numpy.real numpy.reciprocal numpy.remainder
numpy.repeat numpy.reshape numpy.resize numpy.result_type numpy.right_shift numpy.rint
numpy.roll numpy.rollaxis numpy.roots numpy.rot90 numpy.round numpy.save numpy.savez
numpy.searchsorted numpy.select numpy.set_printoptions numpy.setdiff1d numpy.setxor1d
numpy.shape numpy.sign numpy.signbit numpy.sin numpy.sinc numpy.sinh numpy.size numpy.sort
numpy.sort_complex numpy.spacing numpy.split numpy.sqrt numpy.square numpy.squeeze numpy.stack
numpy.std numpy.subtract numpy.sum numpy.swapaxes numpy.take numpy.take_along_axis numpy.tan
numpy.tanh numpy.tensordot numpy.tile numpy.trace numpy.transpose numpy.trapezoid numpy.tri
numpy.tril numpy.tril_indices numpy.tril_indices_from numpy.trim_zeros numpy.triu
numpy.triu_indices numpy.triu_indices_from numpy.true_divide numpy.trunc numpy.union1d
numpy.unique numpy.unique_all numpy.unique_counts numpy.unique_inverse numpy.unique_values
numpy.unpackbits numpy.unravel_index numpy.unstack numpy.unwrap numpy.vander numpy.var
numpy.vdot numpy.vecdot numpy.vecmat numpy.vsplit numpy.vstack numpy.where numpy.zeros
numpy.zeros_like numpy.linalg.cholesky numpy.linalg.cond numpy.linalg.cross numpy.linalg.det
numpy.linalg.diagonal numpy.linalg.eig numpy.linalg.eigh numpy.linalg.eigvals
numpy.linalg.eigvalsh numpy.linalg.inv numpy.linalg.lstsq numpy.linalg.matmul
numpy.linalg.matrix_norm numpy.linalg.matrix_power numpy.linalg.matrix_rank
numpy.linalg.matrix_transpose numpy.linalg.multi_dot numpy.linalg.norm numpy.linalg.outer
numpy.linalg.pinv numpy.linalg.qr numpy.linalg.slogdet numpy.linalg.solve numpy.linalg.svd
numpy.linalg.svdvals numpy.linalg.tensordot numpy.linalg.tensorinv numpy.linalg.tensorsolve
numpy.linalg.trace numpy.linalg.vecdot numpy.linalg.vector_norm numpy.fft.fft numpy.fft.fft2
numpy.fft.fftfreq numpy.fft.fftn numpy.fft.fftshift numpy.fft.hfft numpy.fft.ifft
numpy.fft.ifft2 numpy.fft.ifftn numpy.fft.ifftshift numpy.fft.ihfft numpy.fft.irfft
numpy.fft.irfft2 numpy.fft.irfftn numpy.fft.rfft numpy.fft.rfft2 numpy.fft.rfftfreq
numpy.fft.rfftn
""".split()
