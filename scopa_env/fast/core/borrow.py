"""Borrowed arrays: a kernel's arguments without numba's reference counts.

numba counts references to every array a compiled function holds: each name bound to one, each
argument of an inlined helper, each field read from a bundle, takes a count on entry and drops
it on exit, and each is an atomic operation on the array's ``meminfo``. An entry point's
arguments need none of them: the Python caller holds the arrays for the whole call, and no
kernel keeps an array past it. So the entry points (:func:`~scopa_env.fast.core.kernels.batch_rows`,
:func:`~scopa_env.fast.core.kernels.batch_kernel`, :func:`~scopa_env.fast.core.kernels.playout_kernel`,
:func:`scopa_env.fast.search.search_kernel`) first take :func:`borrowed` views of their bundles:
the same data, shape and strides with a null ``meminfo``, on which numba's counts do nothing.
The kernels then pass bundles to their helpers (:mod:`scopa_env.fast.core.bundles`) at no cost.

Only an argument may be borrowed, never an array the kernel allocates: nothing would keep that
one alive.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.core.typing import signature
from numba.extending import intrinsic


def _borrowable(ty) -> bool:
    """Whether :func:`borrowed` takes a value of numba type ``ty``: an array, None, or a tuple
    (a bundle) of those."""
    if isinstance(ty, (types.Array, types.NoneType)):
        return True
    return isinstance(ty, types.BaseTuple) and all(_borrowable(t) for t in ty.types)


def _borrow(context, builder, ty, value):
    """``value`` of type ``ty`` with a null ``meminfo`` in each of its arrays."""
    if isinstance(ty, types.Array):
        array = context.make_array(ty)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        return array._getvalue()
    if isinstance(ty, types.BaseTuple):
        for k, item_ty in enumerate(ty.types):
            item = _borrow(context, builder, item_ty, builder.extract_value(value, k))
            value = builder.insert_value(value, item, k)
    return value


@intrinsic
def borrowed(typingctx, value):
    """``value`` (an array, or a bundle of arrays and Nones) as views whose references numba does
    not count: for a kernel's own arguments, which its caller holds for the whole call."""
    if not _borrowable(value):
        return None

    def codegen(context, builder, signature, args):
        return _borrow(context, builder, signature.args[0], args[0])

    return signature(value, value), codegen
