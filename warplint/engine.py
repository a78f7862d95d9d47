"""The old name of `warplint.pipeline` (front ends, scripts and tests import it): the same module
object, so that a name replaced here is replaced in the pipeline too."""
import sys

from . import pipeline

sys.modules[__name__] = pipeline
