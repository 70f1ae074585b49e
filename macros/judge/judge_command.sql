{% macro judge_command(op, state_exists, state_version, old_version) %}
    {#- The judging table of docs/spec.md §5 as a SQL expression: null when the command is ok,
        else its conflict type. `state_*` describe the row the command is judged against. -#}
    case
        when {{ op }} = 'U' and not {{ state_exists }} then 'update_missing'
        when {{ op }} = 'U' and not ({{ state_version }} <=> {{ old_version }}) then 'update_update'
        when {{ op }} = 'D' and not {{ state_exists }} then 'delete_missing'
        when {{ op }} = 'D' and not ({{ state_version }} <=> {{ old_version }}) then 'delete_update'
        when {{ op }} = 'I' and {{ state_exists }} then 'insert_exists'
    end
{%- endmacro %}


{% macro conflict_type_code(conflict_type) %}
    {#- SQL Server's conflict_type codes of the transactional conflict tables. -#}
    case {{ conflict_type }}
        when 'update_update' then 1
        when 'update_missing' then 2
        when 'delete_update' then 3
        when 'delete_missing' then 4
        when 'insert_exists' then 5
    end
{%- endmacro %}


{% macro conflict_reason_text(conflict_type) %}
    {#- One sentence per conflict type (qrepl.model.CONFLICT_REASONS holds the same text). -#}
    case {{ conflict_type }}
        when 'update_update' then 'The row was changed at the publisher or by another subscriber since the subscriber read it.'
        when 'update_missing' then 'The subscriber updated a row that no longer exists at the publisher.'
        when 'delete_update' then 'The subscriber deleted a row that was changed elsewhere.'
        when 'delete_missing' then 'The subscriber deleted a row that was already deleted elsewhere.'
        when 'insert_exists' then 'The subscriber inserted a row whose primary key already exists at the publisher.'
    end
{%- endmacro %}


{% macro qrepl_state_matches(state) %}
    {#- The resolution's test of a candidate against a row state (a version, '' for a row
        without one, null for no row): an insert expects no row, anything else its version. -#}
    case
        when expects_absent then {{ state }} is null
        else coalesce({{ state }} = expected_version, false)
    end
{%- endmacro %}


{% macro qrepl_met_state(applied) %}
    {#- The resolution's state a candidate meets when the earlier candidates on its row were
        decided by `applied`: the state the last applied one produced, else the publisher's
        at the batch cut. Over the window `earlier_on_row` (the row's earlier candidates). -#}
    coalesce(
        last(case when {{ applied }} then named_struct('state', produced_state) end, true) over earlier_on_row,
        named_struct('state', root_state)
    ).state
{%- endmacro %}


{% macro qrepl_after_settled(settled) %}
    {#- Whether every earlier candidate on the row (window `earlier_on_row`) is `settled`:
        true for the first candidate on a row. -#}
    coalesce(bool_and({{ settled }}) over earlier_on_row, true)
{%- endmacro %}


{% macro qrepl_state_bytes(version) %}
    {#- A version as the resolution carries it: binary, compared byte for byte. A canonical UUID
        (what the queue's versions are, validated in int_batch_commands) becomes its 16 bytes;
        any other text (a publisher row written around qrepl may hold anything, '' stands for
        a row without a version) becomes 17 zero bytes and then its UTF-8 bytes. The two forms
        never meet (16 bytes against at least 17), and each is one-to-one, so two versions are
        equal exactly when their bytes are. Null stays null. -#}
    case
        when {{ version }} rlike '{{ qrepl_uuid_pattern() }}' then unhex(replace({{ version }}, '-', ''))
        else concat(unhex('0000000000000000000000000000000000'), encode({{ version }}, 'UTF-8'))
    end
{%- endmacro %}


{% macro qrepl_row_partition(relation=none) %}
    {#- The partition columns of a window over one publisher row: its article and key, led by
        their 64-bit hash. Spark sorts a window's rows by its partition columns in order, and
        compares an 8-byte prefix of the first column before it compares whole rows. An
        article's name, or a key's JSON text ('{"item_id":...'), starts with the same bytes on
        most rows, so nearly every comparison reads both rows; a hash tells almost every pair
        apart from the prefix alone (3 s of the resolution at 1M commands, docs/stack.md note
        22). The hash is a function of the article and key, so the partitions are the same. -#}
    {%- set p = relation ~ '.' if relation else '' -%}
    xxhash64({{ p }}article, {{ p }}row_key), {{ p }}article, {{ p }}row_key
{%- endmacro %}
