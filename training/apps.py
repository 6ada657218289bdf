from __future__ import annotations

from django.apps import AppConfig


class TrainingConfig(AppConfig):
    """Training and evaluating the detectors: the ``train_*`` and ``eval_*`` commands.

    Nothing that runs in production imports this package; it imports the runtime
    (``conflicts.detection``) to train and score exactly what ships.
    """

    name = "training"
