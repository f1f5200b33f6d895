import pytest


@pytest.fixture
def demo(db, embedder):
    """The demo agent as `make run` loads it (Rafael moves from Curitiba to São Paulo)."""
    from django.core.management import call_command

    from memories.models import Agent

    call_command("load_demo", "--only", "demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    return Agent.objects.get(slug="demo")


def _user(name: str, group: str | None = None, **extra):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(name, f"{name}@example.com", "pw-" + name, **extra)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def viewer(db):
    return _user("vera", "viewers")


@pytest.fixture
def operator_user(db):
    return _user("otto", "operators")


@pytest.fixture
def viewer_client(client, viewer):
    client.force_login(viewer)
    return client


@pytest.fixture
def operator_client(client, operator_user):
    client.force_login(operator_user)
    return client
