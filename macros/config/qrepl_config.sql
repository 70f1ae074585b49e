{% macro qrepl_config() %}
    {#- The publication's settings and articles, read from the config tables once per run (the
        first node that asks reads them; every later node of the same invocation gets the same
        dict: macro qrepl_run_cache). One read is also one answer: a publication changed while
        a run is under way cannot give two nodes of one batch two policies.
        At parse time (execute is false) an empty publication keeps dbt parse offline. -#}
    {%- if not execute -%}
        {{ return(_qrepl_config_read()) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('config', _qrepl_config_read)) }}
{% endmacro %}


{% macro qrepl_run_cache(key, read) %}
    {#- What `read()` returns, read by the first node of this run that asks for `key` and kept
        for every later one: for what a run reads once and every node needs (the publication's
        configuration, the batch id). The values are kept in dbt's `graph` context variable,
        the one dict dbt builds per invocation and hands to every node and hook, under this
        invocation's id, so a later invocation in the same process (qrepl runs several) reads
        them again. Each read costs a Spark job on an Iceberg table (0.1-0.3 s warm), and 15
        nodes asked for them. -#}
    {%- set runs = graph.setdefault('qrepl_run_cache', {}) -%}
    {%- if invocation_id not in runs -%}
        {%- do runs.clear() -%}
        {%- do runs.update({invocation_id: {}}) -%}
    {%- endif -%}
    {%- set cache = runs[invocation_id] -%}
    {%- if key not in cache -%}
        {%- do cache.update({key: read()}) -%}
    {%- endif -%}
    {{ return(cache[key]) }}
{% endmacro %}


{% macro _qrepl_config_read() %}
    {#- qrepl_config's read of the config tables. -#}
    {%- set config = {
        'publication': 'unset',
        'policy': 'publisher_wins',
        'conflict_retention_days': 0,
        'centralized_conflicts': true,
        'articles': [],
    } -%}
    {%- if not execute -%}
        {{ return(config) }}
    {%- endif -%}
    {%- set settings = run_query(
        'select publication, policy, conflict_retention_days, centralized_conflicts from '
        ~ qrepl_relation('qrepl_publication')
    ) -%}
    {%- if settings.rows | length != 1 -%}
        {%- set msg -%}
qrepl: {{ qrepl_relation('qrepl_publication') }} must hold exactly one publication (found {{ settings.rows | length }}); run `qrepl publication create` first.
        {%- endset -%}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {%- set row = settings.rows[0] -%}
    {%- do config.update({
        'publication': _qrepl_identifier(row[0], 'publication'),
        'policy': qrepl_normalize_policy(row[1]),
        'conflict_retention_days': row[2] | int,
        'centralized_conflicts': row[3],
    }) -%}
    {%- set articles = run_query(
        'select article, to_json(key_columns), to_json(column_names), to_json(column_types) from '
        ~ qrepl_relation('qrepl_articles') ~ ' order by ordinal'
    ) -%}
    {%- for a in articles.rows -%}
        {%- set column_types = fromjson(a[3]) -%}
        {%- set columns = [] -%}
        {%- for name in fromjson(a[2]) -%}
            {%- do columns.append((_qrepl_column(name), _qrepl_type(column_types[loop.index0]))) -%}
        {%- endfor -%}
        {%- set keys = [] -%}
        {%- for k in fromjson(a[1]) -%}
            {%- do keys.append(_qrepl_identifier(k, 'key column')) -%}
        {%- endfor -%}
        {%- do config['articles'].append({
            'name': _qrepl_identifier(a[0], 'article'),
            'key': keys,
            'columns': columns,
        }) -%}
    {%- endfor -%}
    {{ return(config) }}
{% endmacro %}


{% macro qrepl_relation(identifier) %}
    {#- The schema comes from the profile (QREPL_SCHEMA / --schema): validated like every name read at run time. -#}
    {{- return(api.Relation.create(schema=_qrepl_identifier(target.schema, 'schema'), identifier=_qrepl_identifier(identifier, 'table'))) -}}
{% endmacro %}


{% macro qrepl_normalize_policy(policy) %}
    {%- set aliases = {'pub wins': 'publisher_wins', 'sub reinit': 'publisher_wins_reinit', 'sub wins': 'subscriber_wins'} -%}
    {%- set value = (policy or '') | trim | lower -%}
    {%- set value = aliases.get(value, value) -%}
    {%- if value not in ['publisher_wins', 'publisher_wins_reinit', 'subscriber_wins'] -%}
        {%- set msg -%}
qrepl: unknown policy '{{ policy }}': use publisher_wins, publisher_wins_reinit or subscriber_wins ('pub wins', 'sub reinit', 'sub wins').
        {%- endset -%}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}


{% macro _qrepl_identifier(name, what) %}
    {#- fullmatch, not match with ^...$: `$` also matches before a final newline ('north\n') -#}
    {%- if name is none or not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', name | string) -%}
        {%- set msg -%}
qrepl: invalid {{ what }} name '{{ (name | string).replace('\\', '\\\\').replace('\n', '\\n').replace('\r', '\\r') }}': identifiers must match ^[A-Za-z_][A-Za-z0-9_]*$
        {%- endset -%}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(name | string) }}
{% endmacro %}


{% macro _qrepl_column(name) %}
    {#- An article column name read back from qrepl_articles: an identifier, and not one of the
        queue reader's own column names (model.RESERVED_COLUMNS), which would collide in the
        publisher MERGE and the row images. -#}
    {%- set reserved = [
        'msrepl_tran_version', 'row', 'row_key', 'row_json', 'typed_row', 'typed_key', 'change_op', 'op',
        'batch_id', 'subscriber', 'generation', 'tran_id', 'tran_seq', 'tran_pos', 'command_seq', 'article',
        'old_version', 'new_version', 'new_row', 'old_row', 'enqueued_at', 'reject_reason', 'batched_at',
    ] -%}
    {%- if (_qrepl_identifier(name, 'column') | lower) in reserved -%}
        {%- set msg -%}
qrepl: article column name '{{ name }}' is reserved by the queue reader; rename it in the publication
        {%- endset -%}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(name | string) }}
{% endmacro %}


{% macro _qrepl_type(type_name) %}
    {%- set t = (type_name or '') | trim | lower -%}
    {#- model.SCALAR_TYPES and decimal(p,s) -#}
    {%- if t not in ['tinyint', 'smallint', 'int', 'bigint', 'string', 'float', 'double', 'boolean', 'date',
                      'timestamp', 'timestamp_ntz', 'binary']
            and not modules.re.fullmatch('decimal\\(\\d+,\\s*\\d+\\)', t) -%}
        {%- set msg -%}
qrepl: unsupported column type '{{ type_name }}'
        {%- endset -%}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return(t) }}
{% endmacro %}


{% macro qrepl_max_row_bytes() %}
    {#- A queued new_row longer than this (UTF-8 bytes) is quarantined as an oversize row
        (model.MAX_ROW_BYTES). -#}
    {{ return(65536) }}
{% endmacro %}


{% macro qrepl_max_key_bytes() %}
    {#- A queued row_key longer than this (UTF-8 bytes) is quarantined as an oversize key
        (model.MAX_KEY_BYTES: a D command's key, bounded as an I or U command's row is). -#}
    {{ return(65536) }}
{% endmacro %}


{% macro qrepl_uuid_pattern() %}
    {#- Canonical lower-case UUID text (model.UUID_TEXT); versions are lower-cased in staging.
        For `rlike` inside a SQL string literal: it ends in Java's \z (the very end), not $,
        which also matches before a final newline. -#}
    {{ return('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\\\z') }}
{% endmacro %}
