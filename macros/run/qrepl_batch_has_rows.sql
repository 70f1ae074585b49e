{% macro qrepl_batch_has_rows(model_name) %}
    {#- Whether the model `model_name` has any row to write for this run's batch, for a mart that
        opts in with `meta: {qrepl_skip_when: no_rows_for_batch, qrepl_rows_from: <model>,
        qrepl_rows_where: <condition>}`: its rows are exactly the batch's rows of qrepl_rows_from
        that meet qrepl_rows_where (the model selects them with that same meta entry, macro
        qrepl_rows_where, so the question and the model cannot drift apart). When none does, the
        incremental materialization does not run the model: an empty append still commits a
        snapshot (queue_rejects and reinit_requests did on almost every run).
        One query per source model per run (qrepl_run_cache), answering for every mart that
        reads it at once: `select max(<condition>), ... from <source> where batch_id = <batch>`.
        The source is written before any mart that reads it runs, and once per batch, so a rerun
        after a crash gets the same answers. True outside `dbt run` / `dbt build`. -#}
    {%- if not qrepl_is_running() -%}
        {{ return(true) }}
    {%- endif -%}
    {%- set node = _qrepl_model_node(model_name) -%}
    {%- set source_name = node.config.meta.qrepl_rows_from -%}
    {{ return(_qrepl_batch_rows(source_name)[model_name]) }}
{% endmacro %}


{% macro _qrepl_batch_rows(source_name) %}
    {#- The answers of the one query over `source_name` for this run (qrepl_run_cache): per mart
        that reads it, and '*' for any row of the batch at all. -#}
    {{ return(qrepl_run_cache('rows_in_' ~ source_name, _qrepl_batch_has_rows_read, source_name)) }}
{% endmacro %}


{% macro _qrepl_model_node(model_name) %}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.name == model_name -%}
        {{ return(node) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("qrepl: no model named " ~ model_name) }}
{% endmacro %}


{% macro _qrepl_batch_has_rows_read(source_name) %}
    {#- A reader for qrepl_run_cache: qrepl_batch_has_rows' one query over `source_name` for
        every mart that names it in meta.qrepl_rows_from, and under the key '*' whether the
        batch has any row there at all (qrepl_batch_is_empty asks that of int_batch_commands,
        in this same query). -#}
    {%- set ns = namespace(askers=[]) -%}
    {%- for node in graph.nodes.values() | sort(attribute='name') if node.resource_type == 'model' -%}
        {%- set meta = node.config.meta or {} -%}
        {%- if meta.get('qrepl_skip_when') == 'no_rows_for_batch' and meta.get('qrepl_rows_from') == source_name -%}
            {%- do ns.askers.append((node.name, meta.get('qrepl_rows_where'))) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do ns.askers.append(('*', 'true')) -%}
    {%- set source = qrepl_relation(source_name) -%}
    {%- set answers = {} -%}
    {%- if not qrepl_relation_exists(source) -%}
        {%- for name, condition in ns.askers -%}{%- do answers.update({name: false}) -%}{%- endfor -%}
        {{ return(answers) }}
    {%- endif -%}
    {%- set columns = [] -%}
    {%- for name, condition in ns.askers -%}
        {%- do columns.append('coalesce(max(' ~ condition ~ '), false)') -%}
    {%- endfor -%}
    {%- set found = run_query('select ' ~ columns | join(', ') ~ ' from ' ~ source
        ~ ' where batch_id = ' ~ (qrepl_batch_id() | int)).rows[0] -%}
    {%- for name, condition in ns.askers -%}
        {%- do answers.update({name: found[loop.index0] in [true, 'true', 1]}) -%}
    {%- endfor -%}
    {{ return(answers) }}
{% endmacro %}
