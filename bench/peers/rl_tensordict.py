"""bench/peers/rl_tensordict.py -- the peer column of bench/rl_tensordict.lua.
tensordict is not installable here, so this prints the figure tensordict's
issue #1694 publishes for stacking 8 TensorDicts of 20 leaves (127 us),
labelled on stderr as a published figure, not a measurement; the other rows
have no peer."""
import sys

from benchlib import report

sys.stderr.write("rl_tensordict: peer = tensordict issue #1694's published 127 us (not measured here)\n")
report("rl_td_stack_8x20", 127e-6)
