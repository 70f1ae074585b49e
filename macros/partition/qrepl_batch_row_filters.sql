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
    {{ return(qrepl_run_cache('partitions', _qrepl_batch_partitions_read)['filters']) }}
{% endmacro %}

{% macro qrepl_batch_column_lists(skip_when) %}
    {#- The column filters of this run's batch (docs/spec.md §11): one entry per subscription and
        article that takes some of the article's columns, {subscriber, article, columns} (the
        columns in the article's order, every key column among them). Read and kept as
        qrepl_batch_row_filters reads the filters, and empty when it is: the reader's SQL is then
        what it is without column filters. -#}
    {%- if not qrepl_is_running() or model.resource_type == 'unit_test' or qrepl_run_is_idle() -%}
        {{ return([]) }}
    {%- endif -%}
    {%- if (skip_when == 'nothing_new_queued' and qrepl_nothing_new_queued())
        or (skip_when == 'batch_is_empty' and qrepl_batch_is_empty()) -%}
        {{ return([]) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('partitions', _qrepl_batch_partitions_read)['column_lists']) }}
{% endmacro %}

{% macro _qrepl_batch_partitions_read() %}
    {#- The batch's frozen partition specs: {'filters': [...], 'column_lists': [...]}, each stored
        part checked again (a column list names the article's columns, each once, every key
        column among them; a filter's tree is checked when rendered, qrepl_row_filter_sql). -#}
    {%- set relation = qrepl_relation('int_batch_subscriptions') -%}
    {%- if not qrepl_relation_exists(relation) -%}
        {{ return({'filters': [], 'column_lists': []}) }}
    {%- endif -%}
    {%- set found = run_query(
        'select subscriber, partition_spec from ' ~ relation
        ~ ' where batch_id = ' ~ (qrepl_batch_id() | int) ~ ' and partition_spec is not null order by subscriber'
    ) -%}
    {%- set config = qrepl_config() -%}
    {%- set filters = [] -%}
    {%- set column_lists = [] -%}
    {%- for row in found.rows -%}
        {%- set subscriber = _qrepl_identifier(row[0], 'subscriber') -%}
        {%- set spec = fromjson(row[1]) -%}
        {%- if spec is not mapping -%}
            {{ exceptions.raise_compiler_error("qrepl: subscription " ~ subscriber ~ ": partition_spec is not a JSON object") }}
        {%- endif -%}
        {%- for name in spec | sort -%}
            {%- set article = _qrepl_filter_article(config, name, subscriber) -%}
            {%- set entry = spec[name] -%}
            {%- if entry is not mapping -%}
                {{ exceptions.raise_compiler_error("qrepl: subscription " ~ subscriber ~ ": the partition of " ~ name ~ " is not a JSON object") }}
            {%- endif -%}
            {%- if 'tree' in entry -%}
                {%- do filters.append({'subscriber': subscriber, 'article': article, 'tree': entry['tree']}) -%}
            {%- endif -%}
            {%- if 'columns' in entry -%}
                {%- do column_lists.append({'subscriber': subscriber, 'article': article,
                                            'columns': _qrepl_column_list_checked(article, entry['columns'], subscriber)}) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return({'filters': filters, 'column_lists': column_lists}) }}
{% endmacro %}

{% macro _qrepl_column_list_checked(article, names, subscriber) %}
    {#- A stored column list checked again as partitions.parse_columns checks a given one: a
        list of the article's column names, each once, every key column among them; returned in
        the article's column order. -#}
    {%- set fail = "qrepl: subscription " ~ subscriber ~ ": the column list of " ~ article.name -%}
    {%- if names is string or names is mapping or names is not iterable -%}
        {{ exceptions.raise_compiler_error(fail ~ " is not a list of column names") }}
    {%- endif -%}
    {%- set known = [] -%}
    {%- for column, type in article['columns'] -%}{%- do known.append(column) -%}{%- endfor -%}
    {%- for name in names -%}
        {%- if name is not string or name not in known -%}
            {{ exceptions.raise_compiler_error(fail ~ " names a column the article does not have") }}
        {%- endif -%}
    {%- endfor -%}
    {%- if names | unique | list | length != names | length -%}
        {{ exceptions.raise_compiler_error(fail ~ " names a column twice") }}
    {%- endif -%}
    {%- for key in article.key if key not in names -%}
        {{ exceptions.raise_compiler_error(fail ~ " leaves out the key column " ~ key) }}
    {%- endfor -%}
    {{ return(known | select('in', names) | list) }}
{% endmacro %}

{% macro _qrepl_filter_article(config, name, subscriber) %}
    {%- for article in config['articles'] if article.name == name -%}
        {{ return(article) }}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error("qrepl: subscription " ~ subscriber ~ " filters " ~ name ~ ", which is not an article of the publication") }}
{% endmacro %}
