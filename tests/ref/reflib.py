"""tests/ref/reflib.py -- shared by the reference generators: writes Python
values (from PyTorch results) as Lua literals the test runner's ref() loads.
NaN becomes 0/0 and infinities math.huge (the loader provides `math`)."""
import math


def lua(v):
    """A Lua literal for v: bool, int, float, str, list/tuple or dict."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(k + " = " + lua(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))
