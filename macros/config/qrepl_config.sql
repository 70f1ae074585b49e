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
    {#- each row as one JSON object: a qrepl_articles written before table_name existed reads
        the same way (no table_name: the default table) -#}
    {%- set articles = run_query(
        'select to_json(struct(*)) from ' ~ qrepl_relation('qrepl_articles') ~ ' order by ordinal'
    ) -%}
    {%- for row in articles.rows -%}
        {%- set a = fromjson(row[0]) -%}
        {%- set column_types = a.get('column_types') or [] -%}
        {%- set columns = [] -%}
        {%- for name in a.get('column_names') or [] -%}
            {%- do columns.append((_qrepl_column(name), _qrepl_type(column_types[loop.index0]))) -%}
        {%- endfor -%}
        {%- set keys = [] -%}
        {%- for k in a.get('key_columns') or [] -%}
            {%- do keys.append(_qrepl_identifier(k, 'key column')) -%}
        {%- endfor -%}
        {%- set article = {
            'name': _qrepl_identifier(a.get('article'), 'article'),
            'key': keys,
            'columns': columns,
            'table': a.get('table_name'),
        } -%}
        {%- do qrepl_article_relation(article) -%}
        {%- do config['articles'].append(article) -%}
    {%- endfor -%}
    {{ return(config) }}
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
