from django.db import migrations, models


class Migration(migrations.Migration):
    """KeywordTerm.version, drawn from `memories_keyword_version` by every change of a term's
    postings, so readers can cache posting lists and know when one is stale."""

    dependencies = [
        ("memories", "0003_keyword_postings"),
    ]

    operations = [
        migrations.AddField(
            model_name="keywordterm",
            name="version",
            field=models.BigIntegerField(default=0),
        ),
        migrations.RunSQL("CREATE SEQUENCE IF NOT EXISTS memories_keyword_version",
                          reverse_sql="DROP SEQUENCE IF EXISTS memories_keyword_version"),
    ]
