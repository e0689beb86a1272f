from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0006_declined"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="node",
            index=models.Index(fields=["referent_time"], name="memory_node_referent_time"),
        ),
    ]
