{% macro qrepl_outside_partition_sql(filters, alias) %}
    {#- True for a command of `alias` (int_batch_commands' columns, with the parsed images
        qrepl_new__<article> and qrepl_root__<article>) outside its subscriber's partition
        (docs/spec.md §11; reference.ReferenceReader.partition_refusal): an insert's or
        update's new row does not meet the filter, or an update or delete names a publisher
        row the partition does not hold while that row still has the version the command read.
        NULL counts as not met. -#}
    {%- set parts = [] -%}
    {%- for f in filters -%}
        {%- set a = f.article.name -%}
        {%- do parts.append(
            "(" ~ alias ~ ".subscriber = '" ~ f.subscriber ~ "' and " ~ alias ~ ".article = '" ~ a ~ "' and ("
            ~ "(" ~ alias ~ ".op in ('I', 'U') and not coalesce(" ~ qrepl_row_filter_sql(f.tree, f.article, alias ~ '.qrepl_new__' ~ a) ~ ", false))"
            ~ " or (" ~ alias ~ ".op in ('U', 'D') and " ~ alias ~ ".root_exists and " ~ alias ~ ".root_version <=> " ~ alias ~ ".old_version"
            ~ " and not coalesce(" ~ qrepl_row_filter_sql(f.tree, f.article, alias ~ '.qrepl_root__' ~ a) ~ ", false))))"
        ) -%}
    {%- endfor -%}
    {{ return('(' ~ parts | join(' or ') ~ ')') }}
{% endmacro %}
