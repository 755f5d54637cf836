"""The API's models (generated from the OpenAPI document), under a short name."""

from toolgate_client.generated.models import *  # noqa: F403
from toolgate_client.generated.models import __all__ as __all__
