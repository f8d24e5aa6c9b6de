# **************************************************
# Copyright (c) 2026, Mayank Mishra
# **************************************************

from .module import RNN
from .op import rnn
