"""The agents' REST interface (django-ninja): one router per concern under ``/api/v1``, one error format."""
