"""The requests the real-model chapters serve: chapter 10's chat prompts, which chapter 13's
engine (the learner's) serves again.

Short questions and a few long ones, so that the answers end at different lengths: with the chat
template around them they are 34 to 72 tokens long (SmolLM2's tokenizer).
"""

CHAT_PROMPTS = (
    "Say hello in French.",
    "What is the capital of Japan? Answer with one word.",
    "Name three primary colours.",
    "Explain in two sentences why the sky is blue.",
    "Write a haiku about a cat sleeping in the sun.",
    "Is a tomato a fruit or a vegetable? Answer in one short sentence.",
    "Give me three tips for sleeping better.",
    "Translate 'good morning' into Spanish.",
    "My tomato plants have yellow leaves at the bottom and brown spots on the stems. I water them "
    "every evening and they get about six hours of sun. What could be wrong, and what should I try first?",
    "Summarise the plot of Romeo and Juliet for a ten-year-old.",
    "How many legs does a spider have?",
    "List the planets of the solar system in order from the Sun.",
    "I am planning a three-day trip to a city I have never visited. I like museums, quiet cafes and "
    "long walks, but I do not like crowds. How should I plan my days?",
    "What is the opposite of 'ancient'? Reply with a single word.",
    "Write a short, friendly email asking a colleague to move our meeting from Tuesday to Thursday afternoon.",
    "How does a refrigerator keep food cold?",
    "What colour do you get when you mix blue and yellow?",
    "Suggest a name for a small bakery that sells bread and cakes.",
    "A recipe asks for 250 grams of flour for 4 people. I need to cook for 6 people. How much flour "
    "do I need, and how did you work it out?",
    "What is photosynthesis?",
    "Give a one-sentence definition of gravity.",
    "Describe the taste of a lemon to someone who has never eaten one.",
    "Our team keeps missing deadlines because tasks are not written down and people forget who "
    "promised what. Suggest a simple routine we could start next week to fix this.",
    "Which is larger, the Moon or the Earth?",
)
