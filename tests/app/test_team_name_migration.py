"""Revision 0010 recomputes every team's ``name_key`` as its confusable skeleton, suffixing the later of two
teams whose names now look alike; going down gives the casefolded keys back."""

from __future__ import annotations

from pathlib import Path

from alembic.command import downgrade
from sqlalchemy import MetaData, Table, insert, select

from app.storage.db import Database
from app.storage.migrate import alembic_config, upgrade
from app.storage.models import Team
from app.storage.types import utcnow

#: Team names as stored before 0010, in order of creation, with the keys 0007 gave them.
BEFORE = [("victim", "victim"), ("vіctim", "vіctim"), ("Team1", "team1"), ("teaml", "teaml"), ("Ωmega", "ωmega")]


def test_keys_become_skeletons_and_names_that_now_clash_get_a_suffix(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'skeletons.sqlite3'}")
    try:
        upgrade(database.engine, "0009")
        with database.engine.begin() as connection:  # the keys as revision 0009 holds them
            # Core inserts of the columns 0009 has: the models hold columns of later revisions.
            competitions = Table("competitions", MetaData(), autoload_with=connection)
            competition_id = connection.execute(
                insert(competitions).values(
                    slug="comp", title="Comp", description="", participation="open", created_at=utcnow()
                )
            ).inserted_primary_key[0]
            for n, (name, key) in enumerate(BEFORE):
                values = {"competition_id": competition_id, "name": name, "name_key": key, "invite_code": f"code{n}"}
                connection.execute(insert(Team.__table__).values(**values, is_solo=False, created_at=utcnow()))

        upgrade(database.engine)
        with database.session(read_only=True) as session:
            after = session.execute(select(Team.name, Team.name_key).order_by(Team.id)).all()
        assert after == [
            ("victim", "victim"),
            ("vіctim (2)", "victim (2)"),
            ("Team1", "teaml"),
            ("teaml (2)", "teaml (2)"),
            ("Ωmega", "wmega"),
        ]

        downgrade(alembic_config(database.engine), "0009")
        with database.session(read_only=True) as session:
            keys = session.scalars(select(Team.name_key).order_by(Team.id)).all()
        assert keys == ["victim", "vіctim (2)", "team1", "teaml (2)", "ωmega"]
    finally:
        database.dispose()
