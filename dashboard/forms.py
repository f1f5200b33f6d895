"""Forms of the operator actions in the UI; each one feeds one service of memories.services (facts,
entities, forget, maintenance)."""

from django import forms


class FactCorrectForm(forms.Form):
    text = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 3}),
                           help_text="The corrected statement. It becomes a new version; this one is kept as history.")
    reason = forms.CharField(max_length=500, help_text="Why: it is stored in the chain and the audit log.")


    valid_from = forms.DateTimeField(required=False, help_text=(
        "When the corrected statement became true in the world (UTC). Empty: from where the corrected "
        "version started — the old text was never true."))


class FactRetractForm(forms.Form):
    reason = forms.CharField(max_length=500, help_text="Why this is no longer true (or never was).")
    reopen_previous = forms.BooleanField(required=False, help_text=(
        "The version this one replaced becomes current again (a wrong update undone)."))


class FactReinstateForm(forms.Form):
    reason = forms.CharField(max_length=500, help_text="Why this version was right after all.")


class AliasRemoveForm(forms.Form):
    alias = forms.CharField(max_length=255)
    reason = forms.CharField(max_length=500, required=False)


class EntityUnmergeForm(forms.Form):
    merged = forms.IntegerField(help_text="The entity that was merged into this one.")
    reason = forms.CharField(max_length=500, required=False)


class AliasAddForm(forms.Form):
    alias = forms.CharField(max_length=255, help_text="Another name the agent may hear for this entity.")
    move = forms.BooleanField(required=False, help_text="If another entity has this alias, take it from that one.")


class EntityMergeForm(forms.Form):
    merged = forms.TypedChoiceField(coerce=int, label="Entity to merge into this one",
                                    help_text="Its facts, relationships and aliases move here; it stays as a pointer.")
    reason = forms.CharField(max_length=500, required=False)

    def __init__(self, *args, choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["merged"].choices = [(e.id, f"{e.display_name} ({e.key})") for e in choices]


class EntityForgetForm(forms.Form):
    confirm = forms.BooleanField(label="I understand this removes everything listed, for good.")
    reason = forms.CharField(max_length=500, required=False)


class MergeSuggestionDecisionForm(forms.Form):
    """Merge or dismiss one merge suggestion (services/maintenance.py, as the API does)."""

    survivor = forms.IntegerField(required=False, help_text="Merge only: the entity that stays.")
    reason = forms.CharField(max_length=500, required=False)
