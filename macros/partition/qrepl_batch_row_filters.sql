{% macro qrepl_batch_row_filters(skip_when) %}
    {#- The row filters of this run's batch (docs/spec.md §11): one entry per subscription and
        article with a filter, {subscriber, article, tree}, read from the batch's frozen
        subscriptions (int_batch_subscriptions.partition_spec) by the first node that asks and
        kept for the run (qrepl_run_cache). Empty outside a run, in a dbt unit test, in an idle run,
        when the asking model is skipped (`skip_when`, its meta qrepl_skip_when), and when
        no subscription of the batch has a filter: the reader's SQL is then what it is without
        partitions. Each tree is checked again when rendered (qrepl_row_filter_sql). -#}
    {%- if not qrepl_is_running() or model.resource_type == 'unit_test' or qrepl_run_is_idle() -%}
        {{ return([]) }}
    {%- endif -%}
    {#- the asking model is not run (its meta qrepl_skip_when): it needs no filters -#}
    {%- if (skip_when == 'nothing_new_queued' and qrepl_nothing_new_queued())
        or (skip_when == 'batch_is_empty' and qrepl_batch_is_empty()) -%}
        {{ return([]) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('row_filters', _qrepl_batch_row_filters_read)) }}
{% endmacro %}

{% macro _qrepl_batch_row_filters_read() %}
    {%- set relation = qrepl_relation('int_batch_subscriptions') -%}
    {%- if not qrepl_relation_exists(relation) -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set found = run_query(
        'select subscriber, partition_spec from ' ~ relation
        ~ ' where batch_id = ' ~ (qrepl_batch_id() | int) ~ ' and partition_spec is not null order by subscriber'
    ) -%}
    {%- set config = qrepl_config() -%}
    {%- set filters = [] -%}
    {%- for row in found.rows -%}
        {%- set subscriber = _qrepl_identifier(row[0], 'subscriber') -%}
        {%- set spec = fromjson(row[1]) -%}
        {%- if spec is not mapping -%}
            {{ exceptions.raise_compiler_error("qrepl: subscription " ~ subscriber ~ ": partition_spec is not a JSON object") }}
        {%- endif -%}
        {%- for name in spec | sort -%}
            {%- set article = _qrepl_filter_article(config, name, subscriber) -%}
            {%- do filters.append({'subscriber': subscriber, 'article': article, 'tree': spec[name]['tree']}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(filters) }}
{% endmacro %}

{% macro _qrepl_filter_article(config, name, subscriber) %}
    {%- for article in config['articles'] if article.name == name -%}
        {{ return(article) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("qrepl: subscription " ~ subscriber ~ " filters " ~ name ~ ", which is not an article of the publication") }}
{% endmacro %}
