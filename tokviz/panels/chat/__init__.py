"""The Chat view: a conversation rendered with a model's chat template, token by token, with the
prompt linter's findings and the template beside it."""
