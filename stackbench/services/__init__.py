"""Backing services (MariaDB, Redis, memcached) as private servers managed by stackbench."""

from stackbench.errors import ServiceError
from stackbench.services.base import ServiceEndpoint, ServiceKind
from stackbench.services.lifecycle import ServiceSet, reset_data, start_service
from stackbench.services.running import RunningService

__all__ = [
    "RunningService",
    "ServiceEndpoint",
    "ServiceError",
    "ServiceKind",
    "ServiceSet",
    "reset_data",
    "start_service",
]
