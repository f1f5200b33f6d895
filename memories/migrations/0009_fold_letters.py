"""Aliases and entity keys stored before normalization folded the letters that carry no mark
("łukasz wojcik", "person:søren_kierkegaard") are folded now ("lukasz wojcik"), so a name looked up
in its new normal form still finds them. An alias whose folded form another entity of the agent
already has is dropped (the first owner keeps a name); a key whose folded form is taken stays."""

from django.db import migrations

# Frozen copy of memories.naming.LETTER_FOLDS (lower case: aliases and keys are casefolded).
_FOLDS = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ð": "d", "æ": "ae", "œ": "oe", "ß": "ss", "þ": "th",
                        "ħ": "h", "ı": "i"})
_LETTERS = "łøđðæœßþħı"


def fold_letters(apps, schema_editor):
    entity_model = apps.get_model("memories", "Entity")
    alias_model = apps.get_model("memories", "EntityAlias")
    db = schema_editor.connection.alias
    aliases = alias_model.objects.using(db)
    for row in aliases.filter(alias__regex=f"[{_LETTERS}]").order_by("id").iterator():
        folded = row.alias.translate(_FOLDS)
        if aliases.filter(agent_id=row.agent_id, alias=folded).exists():
            row.delete()
        else:
            row.alias = folded
            row.save(update_fields=["alias"])
    entities = entity_model.objects.using(db)
    for entity in entities.filter(key__regex=f"[{_LETTERS}]").order_by("id").iterator():
        folded = entity.key.translate(_FOLDS)
        if not entities.filter(agent_id=entity.agent_id, key=folded).exists():
            entity.key = folded
            entity.save(update_fields=["key"])


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0008_forget_tombstone"),
    ]

    operations = [
        migrations.RunPython(fold_letters, migrations.RunPython.noop, elidable=True),
    ]
