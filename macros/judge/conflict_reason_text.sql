{% macro conflict_reason_text(conflict_type) %}
    {#- One sentence per conflict type (qrepl.core.vocabulary.CONFLICT_REASONS holds the same text).
        Decides docs/spec.md 5.3 (Conflict codes). -#}
    case {{ conflict_type }}
        when 'update_update' then 'The row was changed at the publisher or by another subscriber since the subscriber read it.'
        when 'update_missing' then 'The subscriber updated a row that no longer exists at the publisher.'
        when 'delete_update' then 'The subscriber deleted a row that was changed elsewhere.'
        when 'delete_missing' then 'The subscriber deleted a row that was already deleted elsewhere.'
        when 'insert_exists' then 'The subscriber inserted a row whose primary key already exists at the publisher.'
    end
{%- endmacro %}
