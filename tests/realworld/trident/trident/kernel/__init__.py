# Copyright 2023 ⓒ Kakao Brain Corp.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#    https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from .argmax import *
from .attention import *
from .batch_norm import *
from .cosine_similarity import *
from .dropout import *
from .geglu import *
from .gelu import *
from .group_norm import *
from .instance_norm import *
from .layer_norm import *
from .leaky_relu import *
from .linear import *
from .masked_softmax import *
from .max import *
from .mean import *
from .prelu import *
from .relu import *
from .rms_norm import *
from .shift_gelu import *
from .silu import *
from .softmax import *
from .sum import *
from .var import *
from .var_mean import *
