{% macro qrepl_uuid_pattern() %}
    {#- Canonical lower-case UUID text (model.UUID_TEXT); versions are lower-cased in staging.
        For `rlike` inside a SQL string literal: it ends in Java's \z (the very end), not $,
        which also matches before a final newline. -#}
    {{ return('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\\\z') }}
{% endmacro %}
