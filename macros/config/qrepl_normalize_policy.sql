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
