# A package whose __init__ imports its own submodule: `from tp import acts`
# then finds `acts` bound by `from . import acts`, the package itself again.
from . import acts
