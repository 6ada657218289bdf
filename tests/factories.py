from __future__ import annotations

import concurrent.futures
from typing import Any

import anyio
import factory
from django.contrib.auth import get_user_model
from django.test import Client

from memories.models import Memory
from workspaces.models import AgentKey, Membership, Workspace


class WorkspaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Workspace
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"ws-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("correct horse battery")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    workspace = factory.SubFactory(WorkspaceFactory)
    role = "reviewer"


class MemoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Memory

    workspace = factory.SubFactory(WorkspaceFactory)
    text = factory.Sequence(lambda n: f"fact number {n}")
    agent = "test-agent"


def agent_key_for(workspace: Workspace, name: str = "agent") -> tuple[AgentKey, str]:
    from workspaces.services import agent_key_create

    return agent_key_create(workspace=workspace, name=name)


def memory(**kwargs: Any) -> Memory:
    result: Memory = MemoryFactory(**kwargs)
    return result


def admin_of(workspace: Workspace, username: str = "ana") -> Client:
    """A browser session signed in as an admin of ``workspace``."""
    user = UserFactory(username=username)
    MembershipFactory(user=user, workspace=workspace, role="admin")
    client = Client()
    client.force_login(user)
    return client


def run_async(function: Any, *args: Any) -> Any:
    """``anyio.run(function, *args)`` on a thread of its own.

    Playwright's sync API leaves an event loop running on the main thread once a
    browser test has run, and ``asyncio.run``/``anyio.run`` refuse to start a
    second loop there; a fresh thread has none, whatever ran before.
    """
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, function, *args).result()
