from typing import Literal

from openai import OpenAI
from pydantic import BaseModel


class Forecast(BaseModel):
    city: str
    celsius: float
    sky: Literal["sunny", "cloudy", "rainy"]


def main(base_url: str = "http://127.0.0.1:8000/v1") -> None:
    with OpenAI(base_url=base_url, api_key="unused") as client:
        accepts = client.models.retrieve("forecast").model_extra["lgos"]
        print(accepts["features"], accepts["generation_controls"])

        response = client.responses.parse(
            model="forecast",
            input="Forecast for Oslo?",
            text_format=Forecast,
            temperature=0.2,
        )
        print(response.output_parsed)

        completion = client.chat.completions.parse(
            model="forecast",
            messages=[{"role": "user", "content": "Forecast for Oslo?"}],
            response_format=Forecast,
            seed=7,
            stop=["END"],
        )
        print(completion.choices[0].message.parsed)


if __name__ == "__main__":
    main()
