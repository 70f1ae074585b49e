{% macro qrepl_row_partition(relation=none) %}
    {#- The partition columns of a window over one publisher row: its article and key, led by
        their 64-bit hash. Spark sorts a window's rows by its partition columns in order, and
        compares an 8-byte prefix of the first column before it compares whole rows. An
        article's name, or a key's JSON text ('{"item_id":...'), starts with the same bytes on
        most rows, so nearly every comparison reads both rows; a hash tells almost every pair
        apart from the prefix alone (docs/stack.md note 22; docs/performance.md, "Thresholds
        and choices measured"). The hash is a function of the article and key, so the partitions are the same. -#}
    {%- set p = relation ~ '.' if relation else '' -%}
    xxhash64({{ p }}article, {{ p }}row_key), {{ p }}article, {{ p }}row_key
{%- endmacro %}
